package pipeline

import (
	"fmt"
	"math"

	"github.com/dustin/go-humanize"
)

// ParseSize reads a positive byte size such as 8MiB (the Caddyfile's
// max_result_size, max_response_size); SizeText writes one back.
func ParseSize(s string) (int64, error) {
	n, err := humanize.ParseBytes(s)
	if err != nil || n == 0 || n > math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size of at least one byte (want e.g. 8MiB)", s)
	}
	return int64(n), nil
}
