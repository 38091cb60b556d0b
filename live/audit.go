package live

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// auditLine is one log/agent.ndjson line; fields appear only when set.
type auditLine struct {
	T            int64          `json:"t"`
	Kind         string         `json:"kind"`
	SessionID    string         `json:"session_id,omitempty"`
	CheckpointID string         `json:"checkpoint_id,omitempty"`
	UnitID       string         `json:"unit_id,omitempty"`
	Status       any            `json:"status,omitempty"`
	Note         string         `json:"note,omitempty"`
	Guess        string         `json:"guess,omitempty"`
	Question     string         `json:"question,omitempty"`
	ExpiresAt    jsontext.Value `json:"expires_at,omitzero"`
	Archive      jsontext.Value `json:"archive,omitzero"`
	Bytes        *int64         `json:"bytes,omitempty"`
	Error        string         `json:"error,omitempty"`
}

// rejectedLine is the rejection audit shape (reference §2.6): never headers,
// bodies, query strings or tokens.
type rejectedLine struct {
	T      int64  `json:"t"`
	Kind   string `json:"kind"`
	Method string `json:"method"`
	Route  string `json:"route"`
	Status int    `json:"status"`
	Reason string `json:"reason"`
	Seq    *int64 `json:"seq,omitempty"`
}

// rejectionLimiter bounds rejection lines per minute (reference §2.6):
// count lines since window started.
type rejectionLimiter struct {
	window time.Time
	count  int
}

func (e *endpoint) logRejectionLocked(method, route string, status int, reason string, seq *int64) {
	now := time.Now()
	if now.Sub(e.rejections.window) >= time.Minute {
		e.rejections = rejectionLimiter{window: now}
	}
	e.rejections.count++
	if e.rejections.count > e.opts.RejectionsPerMinute || e.st.logBytes >= e.opts.DiskCap {
		return
	}
	if e.rejections.count == e.opts.RejectionsPerMinute {
		e.st.appendAgentLog(struct {
			T         int64  `json:"t"`
			Kind      string `json:"kind"`
			Until     int64  `json:"until"`
			PerWindow int    `json:"per_window"`
		}{now.UnixMilli(), "rejected_suppressed", e.rejections.window.Add(time.Minute).UnixMilli(), e.opts.RejectionsPerMinute})
		return
	}
	if len(route) > 200 {
		route = route[:200]
	}
	e.st.appendAgentLog(rejectedLine{T: now.UnixMilli(), Kind: "rejected", Method: method, Route: route, Status: status, Reason: reason, Seq: seq})
}
