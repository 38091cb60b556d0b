package runtime

import "github.com/pikit-dev/pikit/internal/piinstall"

// Fixed safe diagnostics. They are presentation
// text only: clients branch on states and codes, never on these strings,
// and no provider error, record, path or command line is ever copied in.
const (
	// Activities.
	actStarting          = "Starting Pi"
	actAccepted          = "Pi accepted the task"
	actWorking           = "Pi is working"
	actTurnFinished      = "Pi finished a turn"
	actCompacting        = "Compacting conversation"
	actCompacted         = "Conversation compacted"
	actRetryAfterCompact = "Retrying after compaction"
	actRetrying          = "Retrying request"
	actStopping          = "Stopping Pi"
	actCompleted         = "Task completed"
	actStopped           = "Task stopped"
	actFailed            = "Task failed"

	// Task errors.
	errTaskRejected      = "Pi rejected the task"
	errMessageError      = "Pi reported a message error"
	errRetriesExhausted  = "Pi could not complete the task after retries"
	errCompactionFailed  = "Pi could not compact the conversation"
	errTaskTimeout       = "Pi task exceeded the configured time limit"
	errAbortDeadline     = "Pi did not stop before the cancellation deadline"
	errAbortRejected     = "Pi rejected cancellation"
	errStoppedUnexpected = "Pi stopped unexpectedly"

	// Protocol failures (task error when busy).
	errMalformedRecord    = "Pi sent a malformed RPC record"
	errOversizedRecord    = "Pi sent an oversized RPC record"
	errNonObjectRecord    = "Pi sent a non-object RPC record"
	errUnterminatedRecord = "Pi sent an unterminated RPC record"
	errMalformedEvent     = "Pi sent a malformed RPC event"
	errUnexpectedResponse = "Pi returned an unexpected RPC response"

	// Session errors.
	sesProtocolFailed    = "Pi protocol failed"
	sesRestarting        = "Pi is restarting"
	sesLostBeforeTask    = "Pi became unavailable before accepting the task"
	sesLostBeforeCancel  = "Pi became unavailable before accepting the cancellation"
	sesHandshakeRejected = "Pi rejected its startup handshake"
	sesInvalidStartup    = "Pi returned invalid startup state"
	sesStoppedStartup    = "Pi stopped during startup"
	sesHandshakeTimeout  = "Pi did not answer its startup handshake"
	sesCannotStart       = "Pi could not be started"
	sesNotFound          = "Pi executable was not found"
	sesCannotRestart     = "Pi could not be restarted"
	sesResetNotRecovered = "Pi could not recover the session reset"
	sesRuntimeStopped    = "Pi runtime stopped"
)

// SessionNoModelMessage is the session error when Pi reports no usable
// model (its placeholder "unknown/unknown"): the session is unavailable,
// not ready, and the message says how to configure a provider. The runtime
// starts Pi again every [NoModelReprobeInterval] until a model appears.
const SessionNoModelMessage = "Pi has no model configured; " + piinstall.ConfigureModel +
	". The taskbar checks again every 30 seconds"

// BrokerUnavailableMessage is the session error of the snapshot served when
// the project broker cannot be reached or verified.
const BrokerUnavailableMessage = "Project broker is unavailable"

// SystemPolicy is the fixed one-shot policy passed to Pi with
// --append-system-prompt.
const SystemPolicy = "You are handling a one-shot browser task with no reply channel. Complete the user's request autonomously without asking follow-up questions. Inspect the repository and use the supplied browser context. Resolve missing details with conservative assumptions. Act directly on implementation requests, but preserve explicit planning and read-only constraints. Do not repeat a failed approach unchanged. If safe completion is impossible, stop and report the exact blocker."
