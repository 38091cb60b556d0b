package piext

import (
	"context"
	"fmt"
	"reflect"
	"slices"
)

// HookHandlerFor handles one event with a typed payload ([HookFor]). It
// returns the event's result: the zero value of a pointer or interface
// type (a nil *ToolCallEventResult, a nil any) leaves the event unchanged;
// anything else is marshalled as JSON for Pi. An error fails the hook as
// its [Hook.Failure] says.
type HookHandlerFor[P, R any] func(ctx context.Context, ev *Event, p P) (R, error)

// HookFor returns h with Handle set for a typed handler. The payload is
// decoded into P strictly, as [Event.Decode] does (a payload that does not
// decode fails the hook); a context or context_with_system hook's
// [ContextEvent] gets [Event.Messages]. The raw payload stays in
// ev.Payload.
//
// P is one of this package's payload types (SessionStartEvent,
// BeforeAgentStartEvent, ContextEvent, ToolCallEvent, ToolResultEvent,
// InputEvent, ModelSelectEvent, SessionBeforeCompactEvent,
// SessionShutdownEvent), which fills an empty h.Event (ContextEvent with
// "context"; set h.Event to EventContextWithSystem for the other), or any
// type the payload decodes into, with h.Event set. R is the event's result type
// (e.g. *ToolCallEventResult; *ContextResult for the context events) or
// any for an event whose result Pi ignores.
//
// HookFor panics on a programming error: h.Event empty for a P that is
// not one of this package's, an event P or R is not for, h.Handle already
// set, a nil handler.
func HookFor[P, R any](h Hook, f HookHandlerFor[P, R]) Hook {
	if f == nil {
		panic(fmt.Sprintf("piext: HookFor %q: nil handler", h.Event))
	}
	if h.Handle != nil {
		panic(fmt.Sprintf("piext: HookFor %q: the hook already has a Handle", h.Event))
	}
	var zero P
	if te, ok := any(zero).(typedEvent); ok {
		events := te.events()
		if h.Event == "" {
			h.Event = events[0]
		}
		if !slices.Contains(events, h.Event) {
			panic(fmt.Sprintf("piext: HookFor %q: %T is the payload of %v", h.Event, zero, events))
		}
	} else if h.Event == "" {
		panic(fmt.Sprintf("piext: HookFor: %T is not one of piext's payload types: set Hook.Event", zero))
	}
	isContext := h.Event == EventContext || h.Event == EventContextWithSystem
	var res R
	if tr, ok := any(res).(typedResult); ok && !slices.Contains(tr.answers(), h.Event) {
		panic(fmt.Sprintf("piext: HookFor %q: %T answers %v", h.Event, res, tr.answers()))
	}
	if _, ok := any(res).(*ContextResult); isContext && !ok && reflect.TypeFor[R]() != reflect.TypeFor[any]() {
		panic(fmt.Sprintf("piext: HookFor %q: the result must be *piext.ContextResult or any, not %T", h.Event, res))
	}
	event := h.Event
	h.Handle = func(ctx context.Context, ev *Event) (any, error) {
		var p P
		if ce, ok := any(&p).(*ContextEvent); ok {
			ce.Messages = ev.Messages
		} else if len(ev.Payload) > 0 {
			if err := ev.Decode(&p); err != nil {
				return nil, fmt.Errorf("piext: %s payload: %w", event, err)
			}
		}
		r, err := f(ctx, ev, p)
		if err != nil {
			return nil, err
		}
		if v := reflect.ValueOf(any(r)); !v.IsValid() || (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface || v.Kind() == reflect.Map || v.Kind() == reflect.Slice) && v.IsNil() {
			return nil, nil
		}
		return r, nil
	}
	return h
}
