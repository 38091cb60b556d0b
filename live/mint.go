package live

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/pikit-dev/pikit/internal/strictjson"
)

// defaultPersona is the interviewer persona, verbatim from seed 002
// ("Default persona"); the page checks its [SCREEN CONTEXT] marker.
//
//go:embed persona.txt
var defaultPersona string

// interviewerTools are the five function tools, verbatim and in order
// (../shared/live-endpoint/interviewer-tools.json, from riffrec, MIT).
//
//go:embed interviewer-tools.json
var interviewerTools []byte

// interviewerToolsCopy returns a copy of the tool definitions the mint sends.
func interviewerToolsCopy() jsontext.Value { return jsontext.Value(bytes.Clone(interviewerTools)) }

// Mint defaults (reference §2.4 "POST /mint", §3.4).
const (
	defaultOpenAIBaseURL = "https://api.openai.com"
	defaultRealtimeModel = "gpt-realtime"
	defaultRealtimeVoice = "marin"
	defaultMintTimeout   = 10 * time.Second
	maxBriefChars        = 3000
	mintsPerMinute       = 5
)

// MintOptions configure POST /mint. Zero values mean the defaults: base URL
// https://api.openai.com, model gpt-realtime, voice marin, timeout 10 s
// (reference §2.4 "POST /mint", §3.4). APIKey is consulted per mint and
// its result is never stored or logged.
type MintOptions struct {
	BaseURL string // OPENAI_BASE_URL; trailing slashes stripped
	Model   string // OPENAI_REALTIME_MODEL
	Voice   string // OPENAI_REALTIME_VOICE
	Timeout time.Duration
	APIKey  func() string // OPENAI_API_KEY source; nil: none
	Client  *http.Client  // nil: a client with Timeout
}

type minter struct {
	opts     MintOptions
	mu       sync.Mutex
	inFlight bool
	attempts []time.Time
}

func (m *minter) init(o *MintOptions) {
	m.opts = *o
	if m.opts.BaseURL == "" {
		m.opts.BaseURL = defaultOpenAIBaseURL
	}
	m.opts.BaseURL = strings.TrimRight(m.opts.BaseURL, "/")
	if m.opts.Model == "" {
		m.opts.Model = defaultRealtimeModel
	}
	if m.opts.Voice == "" {
		m.opts.Voice = defaultRealtimeVoice
	}
	if m.opts.Timeout <= 0 {
		m.opts.Timeout = defaultMintTimeout
	}
	if m.opts.Client == nil {
		m.opts.Client = &http.Client{Timeout: m.opts.Timeout}
	}
}

// secretShapes are compiled at first use, not at the start of every
// pikit process (a Pi extension's sidecar among them).
var secretShapes = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`sk-[A-Za-z0-9_\-]{8,}`),
		regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{16,}`),
		regexp.MustCompile(`github_pat_[A-Za-z0-9_]{20,}`),
		regexp.MustCompile(`AKIA[0-9A-Z]{16}`),
		regexp.MustCompile(`xox[abprs]-[A-Za-z0-9\-]+`),
		regexp.MustCompile(`AIza[0-9A-Za-z_\-]{30,}`),
		regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`),
		regexp.MustCompile(`(?i)[A-Z0-9_]*(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)\s*[=:]\s*\S{6,}`),
		regexp.MustCompile(`(?i)[?&](token|key|api_key|apikey|secret|password|access_token|auth|sig|signature)=[^&\s]+`),
		regexp.MustCompile(`(?i)[a-z][a-z0-9+.\-]*://[^/\s:@]+:[^/\s@]*@`),
	}
})

// briefHasSecret reports whether a session brief matches a secret shape
// (reference §2.4 mint step 4).
func briefHasSecret(brief string) bool {
	for _, re := range secretShapes() {
		if re.MatchString(brief) {
			return true
		}
	}
	return false
}

// mintRequestBody is what POST {base}/v1/realtime/client_secrets receives
// (seed 002, "Mint").
type mintRequestBody struct {
	ExpiresAfter struct {
		Anchor  string `json:"anchor"`
		Seconds int    `json:"seconds"`
	} `json:"expires_after"`
	Session struct {
		Type         string         `json:"type"`
		Model        string         `json:"model"`
		Instructions string         `json:"instructions"`
		Tools        jsontext.Value `json:"tools"`
		ToolChoice   string         `json:"tool_choice"`
		Audio        struct {
			Input struct {
				Transcription struct {
					Model string `json:"model"`
				} `json:"transcription"`
				TurnDetection struct {
					Type              string `json:"type"`
					CreateResponse    bool   `json:"create_response"`
					InterruptResponse bool   `json:"interrupt_response"`
				} `json:"turn_detection"`
			} `json:"input"`
			Output struct {
				Voice string `json:"voice"`
			} `json:"output"`
		} `json:"audio"`
	} `json:"session"`
}

// buildMintBody assembles the client_secrets request body: persona, then
// "\n\n[SESSION BRIEF]\n" and the brief when there is one.
func buildMintBody(model, voice, brief string, hasBrief bool) mintRequestBody {
	var b mintRequestBody
	b.ExpiresAfter.Anchor, b.ExpiresAfter.Seconds = "created_at", 600
	s := &b.Session
	s.Type, s.Model, s.ToolChoice = "realtime", model, "auto"
	s.Instructions = defaultPersona
	if hasBrief {
		s.Instructions += "\n\n[SESSION BRIEF]\n" + brief
	}
	s.Tools = interviewerToolsCopy()
	s.Audio.Input.Transcription.Model = "gpt-4o-mini-transcribe"
	s.Audio.Input.TurnDetection.Type = "semantic_vad"
	s.Audio.Input.TurnDetection.CreateResponse = true
	s.Audio.Input.TurnDetection.InterruptResponse = true
	s.Audio.Output.Voice = voice
	return b
}

func isLoopbackPeer(remote string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	a = a.Unmap()
	return a, a.IsLoopback()
}

// POST /mint (reference §2.4 "POST /mint").
func (e *endpoint) handleMint(w http.ResponseWriter, r *http.Request, sid string) *liveError {
	body, over, err := readCapped(r.Body, maxEventBody)
	if over {
		return &liveError{Code: codeTooLarge, MaxBytes: maxEventBody}
	}
	var req struct {
		SessionID *jsontext.Value `json:"session_id"`
	}
	bad := err != nil
	if !bad && len(bytes.TrimSpace(body)) > 0 {
		var v jsontext.Value
		bad = strictjson.Unmarshal(body, &v, nil) != nil || v.Kind() != '{' || strictjson.Unmarshal(v, &req, nil) != nil
		if !bad && req.SessionID != nil {
			s, ok := strVal(*req.SessionID)
			bad = !ok || s != sid
		}
	}
	if bad {
		return &liveError{Code: codeMintSessionID}
	}
	peer, loop := isLoopbackPeer(r.RemoteAddr)
	if !loop {
		trusted := false
		for _, p := range e.opts.TrustProxy {
			trusted = trusted || p.Unmap() == peer
		}
		proto := strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Proto"), ",")[0])
		if !trusted || !strings.EqualFold(proto, "https") {
			return &liveError{Code: codeTLSRequired}
		}
	}
	key := strings.TrimSpace(r.Header.Get("X-Riffrec-OpenAI-Key"))
	if key == "" && e.mint.opts.APIKey != nil {
		key = strings.TrimSpace(e.mint.opts.APIKey())
	}
	if key == "" {
		return &liveError{Code: codeNoKey}
	}
	brief, hasBrief, err := readBrief(e.st.path(briefFile))
	if err != nil {
		return &liveError{Code: codeBriefUnreadable, Err: err}
	}
	if hasBrief && briefHasSecret(brief) {
		return &liveError{Code: codeBriefSecret}
	}
	if retry, ok := e.mint.admit(time.Now()); !ok {
		return &liveError{Code: codeRateLimited, RetryAfter: retry}
	}
	defer e.mint.done()
	e.mu.Lock()
	e.touchLocked()
	e.mu.Unlock()

	secret, expires, status, err := e.mint.call(r.Context(), key, buildMintBody(e.mint.opts.Model, e.mint.opts.Voice, brief, hasBrief))
	if err != nil {
		return &liveError{Code: codeOpenAIError, UpstreamStatus: status, Err: err}
	}
	e.mu.Lock()
	gone := e.board.Ended || e.board.sessionID() != sid
	if !gone {
		e.st.appendAgentLog(auditLine{T: time.Now().UnixMilli(), Kind: "mint", SessionID: sid, ExpiresAt: expires})
	}
	e.mu.Unlock()
	if gone {
		return &liveError{Code: codeSessionEnded}
	}
	writeJSON(w, http.StatusOK, struct {
		ClientSecret string         `json:"client_secret"`
		ExpiresAt    jsontext.Value `json:"expires_at"`
		Model        string         `json:"model"`
	}{secret, expires, e.mint.opts.Model})
	return nil
}

// readBrief returns the first 3,000 characters of state/brief.md.
func readBrief(path string) (string, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read brief: %w", err)
	}
	s := strings.ToValidUTF8(string(data), "\uFFFD")
	if utf8.RuneCountInString(s) > maxBriefChars {
		s = string([]rune(s)[:maxBriefChars])
	}
	return s, true, nil
}

// admit enforces one mint in flight and five per rolling minute.
func (m *minter) admit(now time.Time) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inFlight {
		return 1, false
	}
	cut := now.Add(-time.Minute)
	kept := m.attempts[:0]
	for _, t := range m.attempts {
		if t.After(cut) {
			kept = append(kept, t)
		}
	}
	m.attempts = kept
	if len(m.attempts) >= mintsPerMinute {
		wait := m.attempts[0].Add(time.Minute).Sub(now)
		return int(math.Ceil(wait.Seconds())), false
	}
	m.attempts = append(m.attempts, now)
	m.inFlight = true
	return 0, true
}

func (m *minter) done() {
	m.mu.Lock()
	m.inFlight = false
	m.mu.Unlock()
}

// call posts to the upstream; the key goes only into the Authorization
// header and the upstream body is never echoed.
func (m *minter) call(ctx context.Context, key string, body mintRequestBody) (string, jsontext.Value, int, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return "", nil, 0, fmt.Errorf("encode mint body: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.opts.BaseURL+"/v1/realtime/client_secrets", bytes.NewReader(data))
	if err != nil {
		return "", nil, 0, fmt.Errorf("mint request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.opts.Client.Do(req)
	if err != nil {
		return "", nil, 0, errors.New("live: mint upstream unreachable")
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", nil, resp.StatusCode, fmt.Errorf("live: mint upstream status %d", resp.StatusCode)
	}
	var out struct {
		Value        *string        `json:"value"`
		ExpiresAt    jsontext.Value `json:"expires_at"`
		ClientSecret *struct {
			Value     *string        `json:"value"`
			ExpiresAt jsontext.Value `json:"expires_at"`
		} `json:"client_secret"`
	}
	_ = json.Unmarshal(raw, &out)
	secret, exp := "", out.ExpiresAt
	if out.Value != nil {
		secret = *out.Value
	} else if out.ClientSecret != nil && out.ClientSecret.Value != nil {
		secret = *out.ClientSecret.Value
	}
	if exp.Kind() != '0' && out.ClientSecret != nil {
		exp = out.ClientSecret.ExpiresAt
	}
	if exp.Kind() != '0' {
		exp = jsontext.Value("null")
	}
	if secret == "" {
		return "", nil, resp.StatusCode, errors.New("live: mint upstream gave no secret")
	}
	return secret, exp, resp.StatusCode, nil
}
