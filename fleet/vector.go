package fleet

import (
	"context"
	"fmt"
	"math"
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
	form := url.Values{"query": {q}, "time": {unixSeconds(ts)}}
	var a answer
	if err := c.post(ctx, "/api/v1/query", form, &a.envelope, &a); err != nil {
		return nil, a.Warnings, err
	}
	if a.Data.ResultType != "vector" {
		return nil, a.Warnings, fmt.Errorf("expected an instant vector, got %q", a.Data.ResultType)
	}
	vec := make([]Series, 0, len(a.Data.Result))
	for i := range a.Data.Result {
		r := &a.Data.Result[i]
		if _, v, ok := samplePair(r.Value); ok {
			vec = append(vec, Series{Labels: r.Metric, Value: v})
		}
	}
	return vec, a.Warnings, nil
}

// post sends form to the API's path through the api.Client and decodes
// the answer into out, whose envelope env is: an error that Prometheus
// answered, or an HTTP failure, is a *v1.Error as v1.API gives it.
func (c *Client) post(ctx context.Context, path string, form url.Values, env *envelope, out any) error {
	u := c.client.URL(path, nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, body, err := c.client.Do(ctx, req)
	if err != nil {
		return err
	}
	code := resp.StatusCode
	// Prometheus answers its own errors in JSON with these codes (as
	// v1.API reads them); any other failure is the HTTP status.
	if code/100 != 2 && code != http.StatusBadRequest && code != http.StatusUnprocessableEntity && code != http.StatusServiceUnavailable {
		kind, side := v1.ErrClient, "client"
		if code/100 == 5 {
			kind, side = v1.ErrServer, "server"
		}
		return &v1.Error{Type: kind, Msg: fmt.Sprintf("%s error: %d", side, code), Detail: excerpt(body)}
	}
	if err := jsonAPI.Unmarshal(body, out); err != nil {
		return &v1.Error{Type: v1.ErrBadResponse, Msg: err.Error(), Detail: excerpt(body)}
	}
	if env.Status != "success" {
		msg := env.Error
		if msg == "" {
			msg = "status " + strconv.Quote(env.Status)
		}
		return &v1.Error{Type: v1.ErrorType(env.ErrorType), Msg: msg}
	}
	return nil
}

// samplePair reads one [seconds, "value"] pair of Prometheus' answer;
// false for anything else (a histogram sample: bondtop reads none).
func samplePair(p [2]any) (time.Time, float64, bool) {
	t, okT := p[0].(float64)
	s, okV := p[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if !okT || !okV || err != nil {
		return time.Time{}, 0, false
	}
	return time.UnixMilli(int64(math.Round(t * 1000))), v, true
}

// jsonAPI decodes as encoding/json would, as client_golang does.
var jsonAPI = jsoniter.ConfigCompatibleWithStandardLibrary

// envelope is what every answer of Prometheus' HTTP API carries.
type envelope struct {
	Status    string   `json:"status"`
	ErrorType string   `json:"errorType"`
	Error     string   `json:"error"`
	Warnings  []string `json:"warnings"`
}

// answer is Prometheus' answer to an instant query: a vector.
type answer struct {
	envelope
	Data struct {
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
