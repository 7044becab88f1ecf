package resources

import (
	"encoding/json"
	"mime"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Contents shapes a result for resources/read: JSON as text for a JSON
// type; for any other type, the one value the resource returned (a string,
// or one row of one column) as text. No row at all, or a null, is "not
// found" (an error with code mcp.RESOURCE_NOT_FOUND).
func Contents(res *pipeline.Result, uri, mimeType string) (mcp.ResourceContents, *pipeline.Error) {
	value := res.Value
	if res.Native != nil {
		value = res.Native
	}
	if isJSONMime(mimeType) {
		text, err := json.Marshal(value)
		if err != nil {
			return nil, pipeline.Fail(pipeline.StageResponse, err, "result is not JSON-encodable")
		}
		return mcp.TextResourceContents{URI: uri, MIMEType: mimeType, Text: string(text)}, nil
	}
	switch v := value.(type) {
	case *pipeline.Rows:
		if v == nil || len(v.Values) == 0 {
			return nil, &pipeline.Error{Code: mcp.RESOURCE_NOT_FOUND}
		}
		if len(v.Values) != 1 || len(v.Columns) != 1 {
			return nil, pipeline.Fail(pipeline.StageResponse, nil, "mime_type %s needs one value: the statement returned %d rows of %d columns", mimeType, len(v.Values), len(v.Columns))
		}
		value = v.Values[0][0]
	case json.RawMessage: // a script's value
		var decoded any
		if err := json.Unmarshal(v, &decoded); err != nil {
			return nil, pipeline.Fail(pipeline.StageResponse, err, "handler returned invalid JSON")
		}
		value = decoded
	}
	switch v := value.(type) {
	case nil:
		return nil, &pipeline.Error{Code: mcp.RESOURCE_NOT_FOUND}
	case string:
		return mcp.TextResourceContents{URI: uri, MIMEType: mimeType, Text: v}, nil
	}
	return nil, pipeline.Fail(pipeline.StageResponse, nil, "mime_type %s needs a string value, got %T (use mime_type application/json for structured results)", mimeType, value)
}

func isJSONMime(t string) bool {
	mt, _, err := mime.ParseMediaType(t)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}
