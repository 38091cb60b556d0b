package broker

// UseProbeIdle makes a client built from o check pooled connections with
// the portable probe (platform.ProbeIdle, what Windows uses) instead of the
// OS's native check, so the Linux run covers it.
func UseProbeIdle(o *ClientOptions) { o.probeIdle = true }
