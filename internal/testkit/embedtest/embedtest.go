// Package embedtest is a small OpenAI-compatible embeddings server for tests:
// POST /v1/embeddings with {"model","input":[…]} answers
// {"data":[{"index","embedding"}]}.
//
// It fakes a model, and says so: a text's vector is a hashed bag of its
// words, after a crude stemmer and a few words mapped to a shared concept
// (Concepts), which stand in for what a real model learns. Texts that share
// words or concepts are near; others are nearly orthogonal. Vectors are
// deterministic, so rankings in tests are too.
package embedtest

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// Dims is the length of every vector.
const Dims = 256

// Concepts maps a word to the word it means here, so that a query can find
// a tool by meaning without sharing a word with it.
var Concepts = map[string]string{
	"kerfuffle": "issue", "ticket": "issue", "bug": "issue", "problem": "issue",
	"forecast": "weather", "rain": "weather", "temperature": "weather",
	"documentation": "docs", "manual": "docs",
}

// Vector returns the fake model's embedding of text.
func Vector(text string) []float32 {
	v := make([]float32, Dims)
	for _, w := range Words(text) {
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		sign := float32(1)
		if x>>63 == 1 {
			sign = -1
		}
		v[x%Dims] += sign
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		v[0] = 1 // no words: a fixed direction
		return v
	}
	n := float32(math.Sqrt(sum))
	for i := range v {
		v[i] /= n
	}
	return v
}

// Words splits text into lower-case words, stemmed and mapped through
// Concepts; each CJK character is a word.
func Words(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		var latin []rune
		flush := func() {
			if len(latin) > 0 {
				out = append(out, concept(strings.ToLower(string(latin))))
				latin = latin[:0]
			}
		}
		for i, r := range []rune(f) {
			switch {
			case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r):
				flush()
				out = append(out, string(r))
			case unicode.IsUpper(r) && i > 0 && len(latin) > 0 && unicode.IsLower(latin[len(latin)-1]):
				flush()
				latin = append(latin, r)
			default:
				latin = append(latin, r)
			}
		}
		flush()
	}
	return out
}

func concept(w string) string {
	for _, suffix := range []string{"ing", "es", "ed", "s"} {
		if len(w) > len(suffix)+2 && strings.HasSuffix(w, suffix) {
			w = strings.TrimSuffix(w, suffix)
			break
		}
	}
	if c, ok := Concepts[w]; ok {
		return c
	}
	return w
}

// Hang is a status for FailWith: no answer at all.
const Hang = -1

// Request is one request the server received.
type Request struct {
	Authorization string
	Model         string
	Input         []string
}

// Server is a running fake endpoint.
type Server struct {
	*httptest.Server
	BaseURL string // the base URL to configure: http://127.0.0.1:PORT/v1

	mu       sync.Mutex
	requests []Request
	fail     func(r Request) (status int, body string) // nil: answer
}

// Start starts a server on 127.0.0.1, closed when the test ends.
func Start(t testing.TB) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	s.BaseURL = s.Server.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// FailWith makes the server answer every request for which f returns a
// non-zero status with that status and body, or, for Hang, not answer
// until the client gives up; nil answers normally again.
func (s *Server) FailWith(f func(r Request) (status int, body string)) {
	s.mu.Lock()
	s.fail = f
	s.mu.Unlock()
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var body struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	req := Request{Authorization: r.Header.Get("Authorization"), Model: body.Model}
	if json.Unmarshal(body.Input, &req.Input) != nil {
		var one string
		if json.Unmarshal(body.Input, &one) != nil {
			http.Error(w, `{"error":{"message":"input must be a string or an array of strings"}}`, http.StatusBadRequest)
			return
		}
		req.Input = []string{one}
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		if status, msg := fail(req); status == Hang {
			<-r.Context().Done()
			return
		} else if status != 0 {
			w.WriteHeader(status)
			w.Write([]byte(msg))
			return
		}
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Model  string `json:"model"`
		Data   []item `json:"data"`
	}{Object: "list", Model: body.Model}
	// Answer in reverse order: clients must place items by index.
	for i := len(req.Input) - 1; i >= 0; i-- {
		resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: Vector(req.Input[i])})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}
