package durable_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/pikit-dev/pikit/internal/durable"
)

func Example() {
	dir, err := os.MkdirTemp("", "durable-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	state := filepath.Join(dir, "state")
	if err := durable.MkdirAll(state, 0o700); err != nil {
		log.Fatal(err)
	}
	if err := durable.RemoveTemps(state); err != nil { // on open: a crash may have left some
		log.Fatal(err)
	}
	if err := durable.WriteFile(filepath.Join(state, "board.json"), []byte(`{"units":[]}`+"\n"), 0o600); err != nil {
		log.Fatal(err)
	}

	events := filepath.Join(state, "events.ndjson")
	j, records, err := durable.OpenJournal(events, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("records at open:", len(records))
	if err := j.Append([]byte(`{"seq":1}`), []byte(`{"seq":2}`)); err != nil {
		log.Fatal(err) // not acknowledged
	}
	j.Close()

	// A crash in the middle of an append leaves a partial last line.
	f, _ := os.OpenFile(events, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"seq":3,"pay`)
	f.Close()

	j, records, err = durable.OpenJournal(events, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer j.Close()
	for _, r := range records {
		fmt.Println(string(r))
	}
	fmt.Println("torn bytes cut:", j.TornBytes())
	// Output:
	// records at open: 0
	// {"seq":1}
	// {"seq":2}
	// torn bytes cut: 13
}
