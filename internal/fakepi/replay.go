package fakepi

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
)

// transcript is rpc-transcript.v1 (taskbar-contract/schemas).
type transcript struct {
	ContractVersion int    `json:"contract_version"`
	Name            string `json:"name"`
	Steps           []struct {
		Direction string         `json:"direction"`
		Message   map[string]any `json:"message"`
	} `json:"steps"`
}

// replay plays the transcript, then waits for stdin to end, and returns
// the exit status.
func (f *fake) replay() int {
	b, err := os.ReadFile(f.transcript)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakepi: cannot read transcript")
		return 2
	}
	var tr transcript
	if err := json.Unmarshal(b, &tr); err != nil || tr.ContractVersion != 1 {
		fmt.Fprintln(os.Stderr, "fakepi: bad transcript")
		return 2
	}
	ids := map[string]string{} // transcript id -> client id
	for i, st := range tr.Steps {
		switch st.Direction {
		case "receive":
			line, err := f.readLine()
			if err != nil {
				return 0
			}
			var got map[string]any
			if json.Unmarshal(line, &got) != nil {
				fmt.Fprintf(os.Stderr, "fakepi: step %d: command is not a JSON object\n", i)
				return 4
			}
			if id, ok := st.Message["id"].(string); ok {
				client, _ := got["id"].(string)
				ids[id] = client
				got["id"] = id
			}
			if !reflect.DeepEqual(got, st.Message) {
				fmt.Fprintf(os.Stderr, "fakepi: step %d: command %v differs from the transcript's %v\n", i, got["type"], st.Message["type"])
				return 4
			}
		case "send":
			m := st.Message
			if id, ok := m["id"].(string); ok {
				if client, ok := ids[id]; ok {
					m["id"] = client
				}
			}
			f.write(m)
		default:
			fmt.Fprintf(os.Stderr, "fakepi: step %d: bad direction\n", i)
			return 2
		}
	}
	if _, err := f.readLine(); err == nil {
		fmt.Fprintln(os.Stderr, "fakepi: command after the last transcript step")
		return 4
	}
	return 0
}
