package openapi

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// TestErrorExcerptHoldsNoCredential: an upstream that quotes the request
// back in an error (its URL, Authorization, cookies, headers) does not hand
// the caller the gateway's credentials: each value the request carried is
// cut out of the excerpt, also one the 2,000 bytes read would cut in two.
func TestErrorExcerptHoldsNoCredential(t *testing.T) {
	const token, key, sid, static = "bearer-secret-1234", "key&secret/5678", "cookie-secret-9012", "static-secret-3456"
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		if strings.HasSuffix(r.URL.Path, "/straddle") {
			io.WriteString(w, strings.Repeat(" ", 1984)+r.Header.Get("Authorization"))
			return
		}
		fmt.Fprintf(w, "bad request %s %s\nAuthorization: %s\nCookie: %s\nX-Static: %s\n",
			r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Cookie"), r.Header.Get("X-Static"))
	})
	tools := toolsFor(t, srv, Config{Credentials: []upstream.Credential{
		upstream.Bearer{Token: token},
		upstream.APIKey{In: "query", Name: "api_key", Value: key},
		upstream.APIKey{In: "cookie", Name: "session", Value: sid},
		upstream.Header{Name: "X-Static", Value: static},
	}})
	for _, petID := range []string{"7", "straddle"} {
		_, err := call(t, tools["showPetById"], `{"petId": "`+petID+`"}`, nil)
		msg := pipeline.SafeText(err, "")
		if !strings.HasPrefix(msg, "HTTP 400 Bad Request") {
			t.Fatalf("%s: %v", petID, err)
		}
		for _, secret := range []string{token, key, "key%26secret%2F5678", sid, static} {
			if strings.Contains(msg, secret[:8]) {
				t.Errorf("%s: the caller sees %q of a credential: %s", petID, secret[:8], msg)
			}
		}
		if petID == "7" && (!strings.Contains(msg, "[redacted]") || !strings.Contains(msg, "/v1/pets/7")) {
			t.Errorf("the excerpt lost more than the credentials: %s", msg)
		}
	}
}
