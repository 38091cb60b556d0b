package release_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// noopPackage is the no-op one-file Pi package without dependencies that
// [benchRegistry] publishes: the in-run baseline of an extension.
const noopPackage = "npm:@pikit-test/noop"

// benchRegistry is the setup every real-Pi benchmark of this package
// shares: a local registry with release 0.1.0-test.1 and [noopPackage]
// published.
func benchRegistry(b *testing.B) *pitest.Registry {
	res := newRelease(b, "0.1.0-test.1", "")
	reg := pitest.StartRegistry(b)
	publishRelease(b, reg, res)
	noop := filepath.Join(b.TempDir(), "noop")
	writeFile(b, filepath.Join(noop, "index.ts"), "export default function (pi: unknown): void {}\n")
	writeFile(b, filepath.Join(noop, "package.json"), `{"name":"@pikit-test/noop","version":"1.0.0","keywords":["pi-package"],"pi":{"extensions":["./index.ts"]}}`+"\n")
	reg.Publish(b, noop)
	return reg
}

// installVariant installs what startup variant name compares into p's
// agent dir: nothing ("none"), [noopPackage] ("noop"), the StateFlow and
// midcompact Pi packages from the registry ("npm"), or the same two
// extensions by `pikit ext install` ("ext": the bridge and sidecars
// without npm).
func installVariant(b *testing.B, p *piNPM, name string) {
	switch name {
	case "none":
	case "noop":
		p.pi(b, "install", noopPackage)
	case "npm":
		p.pi(b, "install", "npm:@pikit/stateflow")
		p.pi(b, "install", "npm:@pikit/midcompact")
	case "ext":
		p.env.InstallExtension(b, "stateflow", "")
		p.env.InstallExtension(b, "midcompact", "")
	default:
		b.Fatalf("unknown startup variant %q", name)
	}
}

// BenchmarkRealPi_Startup: Pi's time from process start to the first model
// request (the prompt is sent at once, Pi answers it when ready) with the
// StateFlow and midcompact packages installed from the local registry
// ("npm"), against the same Pi with no package (the in-run baseline,
// "none") and with the same two extensions installed by `pikit ext
// install` ("ext": the bridge and sidecars without npm); each iteration
// starts all three. Reported: none-ms, npm-ms, ext-ms, delta-ms (npm -
// none; goal: <= 100) and npm/ext.
func BenchmarkRealPi_Startup(b *testing.B) {
	reg := benchRegistry(b)
	first := make(chan time.Time, 1)
	script := func(r *modelserver.Request) modelserver.Script {
		select {
		case first <- time.Now():
		default:
		}
		return modelserver.Script{Text: []string{"ok"}}
	}
	none := newPiNPM(b, reg, script)
	both := newPiNPM(b, reg, script)
	installVariant(b, both, "npm")
	ext := newPiNPM(b, reg, script)
	installVariant(b, ext, "ext")
	run := func(p *piNPM) time.Duration {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		select {
		case <-first:
		default:
		}
		start := time.Now()
		c, err := pirpc.Start(ctx, p.env.Options())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(ctx)
		if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "hello"}); err != nil {
			b.Fatal(err)
		}
		var at time.Time
		select {
		case at = <-first:
		case <-ctx.Done():
			b.Fatal("no model request")
		}
		pitest.Until(b, ctx, c, settled)
		return at.Sub(start)
	}
	var sumNone, sumNPM, sumExt time.Duration
	n := 0
	for b.Loop() {
		sumNone += run(none)
		sumNPM += run(both)
		sumExt += run(ext)
		n++
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(n) / 1e6 }
	b.ReportMetric(ms(sumNone), "none-ms")
	b.ReportMetric(ms(sumNPM), "npm-ms")
	b.ReportMetric(ms(sumExt), "ext-ms")
	b.ReportMetric(ms(sumNPM-sumNone), "delta-ms")
	b.ReportMetric(float64(sumNPM)/float64(sumExt), "npm/ext")
}

// BenchmarkRealPi_Install: wall time of `pi install npm:@pikit/stateflow`
// (the Pi package and its linux-x64 binary package) from the local
// registry into a fresh agent dir, against `pi install` of
// [noopPackage] (the in-run baseline). Reported:
// stateflow-ms, tiny-ms (the no-op package) and stateflow/tiny.
func BenchmarkRealPi_Install(b *testing.B) {
	reg := benchRegistry(b)
	var sumSF, sumTiny time.Duration
	n := 0
	for b.Loop() {
		_, d := newPiNPM(b, reg, nil).pi(b, "install", "npm:@pikit/stateflow")
		sumSF += d
		_, d = newPiNPM(b, reg, nil).pi(b, "install", noopPackage)
		sumTiny += d
		n++
	}
	b.ReportMetric(float64(sumSF)/float64(n)/1e6, "stateflow-ms")
	b.ReportMetric(float64(sumTiny)/float64(n)/1e6, "tiny-ms")
	b.ReportMetric(float64(sumSF)/float64(sumTiny), "stateflow/tiny")
}
