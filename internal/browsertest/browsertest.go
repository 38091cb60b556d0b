// Package browsertest is the browser side of the project's acceptance
// tests: it starts a real browser engine for one test, evaluates
// JavaScript in its tabs, sends real pointer and key input, reads the
// taskbar's Shadow DOM, and runs axe-core from the test peers cache
// (DESIGN.md "Testing levels" 3).
//
// # Engines
//
// A test is written once against [Tab] and runs in each [Engine] through
// [ForEachEngine] (subtests chromium, firefox, webkit), as seed 000's
// acceptance asks:
//
//   - Chromium: Debian chromium through chromedp (CDP);
//   - Firefox: Debian firefox-esr, headless, over WebDriver BiDi on its
//     remote-debugging port (package bidi);
//   - WebKit: WebKitGTK's MiniBrowser through WebKitWebDriver, the W3C
//     WebDriver (package webdriver), on a private Xvfb display (WebKitGTK
//     has no headless mode).
//
// What one engine cannot do is refused by name, never faked: only
// Chromium emulates a network loss ([SetOffline]).
//
// # Peers
//
// Chromium is $PIKIT_CHROMIUM, /usr/bin/chromium or /usr/bin/chromium-browser;
// Firefox is $PIKIT_FIREFOX, firefox-esr or firefox; WebKit needs
// WebKitWebDriver and Xvfb on PATH; axe-core is
// node_modules/axe-core/axe.min.js under $PIKIT_TESTDEPS, else
// <module root>/.cache/testdeps (scripts/install-test-deps installs all).
// A missing peer skips the test, or fails it under CI=true (COMMON rules:
// a missing peer never skips in CI).
//
// # Processes
//
// Every process a test starts (chromium, firefox, WebKitWebDriver with its
// MiniBrowser, Xvfb) has exited before the test's cleanup ends.
//
// # Files
//
//	browsertest.go  engines and their peers
//	tab.go          New, NewTab, CloseTab: a browser for one test and its tabs
//	page.go         Navigate, Reload, Eval, Do, Wait: pages and JavaScript
//	input.go        ClickAt, ClickXY, MouseDown/Up, Key, SetOffline
//	screenshot.go   Screenshot, ScreenshotDir
//	taskbar.go      the taskbar's Shadow DOM
//	axe.go          axe-core
//	chromium.go, firefox.go, webkit.go   one driver per engine
//	w3cinput.go     the input actions of the WebDriver engines
//	process.go      the browser processes and their exit
//
// # Example
//
//	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
//		tab := browsertest.New(t, &browsertest.Options{Engine: e, Width: 320, Height: 640})
//		browsertest.Navigate(t, tab, url)
//		browsertest.Wait(t, tab, "Ready", browsertest.Shadow(`root.querySelector("[data-status]").dataset.state === "ready"`), time.Minute)
//	})
package browsertest

import (
	"os"
	"os/exec"
	"testing"
)

// Engine names a browser engine.
type Engine string

// The engines tests run in.
const (
	Chromium Engine = "chromium"
	Firefox  Engine = "firefox"
	WebKit   Engine = "webkit"
)

// Engines returns every engine, in the order [ForEachEngine] runs them.
func Engines() []Engine { return []Engine{Chromium, Firefox, WebKit} }

// ForEachEngine runs f as one subtest per engine, named after it.
func ForEachEngine(t *testing.T, f func(t *testing.T, e Engine)) {
	t.Helper()
	for _, e := range Engines() {
		t.Run(string(e), func(t *testing.T) { f(t, e) })
	}
}

// Require ends the test unless every engine's peers are installed: t.Fatal
// under CI=true, t.Skip otherwise. Call it before starting anything else.
func Require(t testing.TB, engines ...Engine) {
	t.Helper()
	for _, e := range engines {
		if missing := missingPeer(e); missing != "" {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required under CI=true (scripts/install-test-deps installs it): %s", e, missing)
			}
			t.Skipf("%s not available: %s (run scripts/install-test-deps)", e, missing)
		}
	}
}

// missingPeer says what of engine's peers is not installed, or "".
func missingPeer(e Engine) string {
	switch e {
	case Chromium:
		if ChromiumPath() == "" {
			return "no chromium; set PIKIT_CHROMIUM or install /usr/bin/chromium"
		}
	case Firefox:
		if FirefoxPath() == "" {
			return "no firefox-esr; set PIKIT_FIREFOX or install firefox-esr"
		}
	case WebKit:
		if lookPeer("WebKitWebDriver") == "" {
			return "no WebKitWebDriver (Debian webkit2gtk-driver)"
		}
		if lookPeer("Xvfb") == "" {
			return "no Xvfb (Debian xvfb)"
		}
	default:
		return "unknown engine"
	}
	return ""
}

// lookPeer returns the first of names found as a path or on PATH, or "".
func lookPeer(names ...string) string {
	for _, n := range names {
		if n == "" {
			continue
		}
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}
