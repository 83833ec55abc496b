package fleet

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	jsoniter "github.com/json-iterator/go"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// query asks Prometheus for the instant vector of q at ts, as v1.API's
// Query does (a POST form to /api/v1/query through the api.Client, so
// the http_config's auth, TLS and proxy apply, and the same *v1.Error
// for what Prometheus refuses), but decodes the answer in one pass:
// model.Sample decodes each sample a second time with encoding/json,
// and model.Metric each label name, which took three quarters of
// bondtop's CPU for a list of 10 000 bonds (docs/fleet.md, "Cost").
func (c *Client) query(ctx context.Context, q string, ts time.Time) ([]Series, []string, error) {
	form := url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(ts.UnixNano())/1e9, 'f', -1, 64)}}
	u := c.client.URL("/api/v1/query", nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, body, err := c.client.Do(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	code := resp.StatusCode
	// Prometheus answers its own errors in JSON with these codes (as
	// v1.API reads them); any other failure is the HTTP status.
	if code/100 != 2 && code != http.StatusBadRequest && code != http.StatusUnprocessableEntity && code != http.StatusServiceUnavailable {
		kind, side := v1.ErrClient, "client"
		if code/100 == 5 {
			kind, side = v1.ErrServer, "server"
		}
		return nil, nil, &v1.Error{Type: kind, Msg: fmt.Sprintf("%s error: %d", side, code), Detail: excerpt(body)}
	}
	var a answer
	if err := jsonAPI.Unmarshal(body, &a); err != nil {
		return nil, nil, &v1.Error{Type: v1.ErrBadResponse, Msg: err.Error(), Detail: excerpt(body)}
	}
	if a.Status != "success" {
		msg := a.Error
		if msg == "" {
			msg = "status " + strconv.Quote(a.Status)
		}
		return nil, a.Warnings, &v1.Error{Type: v1.ErrorType(a.ErrorType), Msg: msg}
	}
	if a.Data.ResultType != "vector" {
		return nil, a.Warnings, fmt.Errorf("expected an instant vector, got %q", a.Data.ResultType)
	}
	vec := make([]Series, 0, len(a.Data.Result))
	for i := range a.Data.Result {
		r := &a.Data.Result[i]
		s, ok := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if !ok || err != nil {
			continue // a histogram sample, or not a sample: bondtop reads none
		}
		vec = append(vec, Series{Labels: r.Metric, Value: v})
	}
	return vec, a.Warnings, nil
}

// jsonAPI decodes as encoding/json would, as client_golang does.
var jsonAPI = jsoniter.ConfigCompatibleWithStandardLibrary

// answer is Prometheus' answer to an instant query (its HTTP API's
// envelope, a vector as data).
type answer struct {
	Status    string   `json:"status"`
	ErrorType string   `json:"errorType"`
	Error     string   `json:"error"`
	Warnings  []string `json:"warnings"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			// Metric is a plain map: model.Metric's keys decode
			// through LabelName's UnmarshalJSON, one encoding/json
			// call per label.
			Metric map[string]string `json:"metric"`
			// Value is [seconds, "value"].
			Value [2]any `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

// excerpt is the start of a body that is not Prometheus' JSON, for a
// message.
func excerpt(body []byte) string {
	const most = 200
	s := strings.TrimSpace(string(body))
	if len(s) > most {
		s = s[:most] + "…"
	}
	return s
}
