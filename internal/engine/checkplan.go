package engine

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/runtasks/runtasks/internal/agentfile"
)

// Plan item statuses (Claude Code TodoWrite and Codex update_plan share them).
const (
	PlanPending   = "pending"
	PlanCompleted = "completed"
)

// PlanItem is one item of the agent's own plan.
type PlanItem struct {
	Text   string `json:"text"`
	Status string `json:"status"`
}

// ReadPlan reads the agent's latest plan from a transcript: the last Claude
// Code TodoWrite call ({"todos":[{content,status}]}), Codex update_plan call
// ({"plan":[{step,status}]}) or Codex exec todo_list item
// ({"items":[{text,completed}]}). found is false when the transcript holds
// no plan. The file is read once, line by line.
func ReadPlan(path string) (items []PlanItem, found bool, err error) {
	f, _, err := agentfile.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, rerr := r.ReadBytes('\n')
		if s := string(line); strings.Contains(s, "TodoWrite") || strings.Contains(s, "update_plan") || strings.Contains(s, "todo_list") {
			if p, ok := planFromLine(line); ok {
				items, found = p, true
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return items, found, nil
			}
			return nil, false, rerr
		}
	}
}

// planTodos is a TodoWrite input ({"todos":[{content,status}]}) or an
// update_plan's arguments ({"plan":[{step,status}]}).
type planTodos struct {
	Todos []planStep `json:"todos"`
	Plan  []planStep `json:"plan"`
}

type planStep struct{ Content, Step, Status string }

func (p planTodos) items() ([]PlanItem, bool) {
	steps := p.Todos
	if steps == nil {
		steps = p.Plan
	}
	if steps == nil {
		return nil, false
	}
	out := make([]PlanItem, 0, len(steps))
	for _, t := range steps {
		out = append(out, PlanItem{Text: cmp.Or(t.Content, t.Step), Status: t.Status})
	}
	return out, true
}

// planFromLine decodes one transcript line that may hold a plan.
func planFromLine(line []byte) ([]PlanItem, bool) {
	var raw struct {
		Type    string `json:"type"`
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		Payload *struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"payload"`
		Item *struct {
			Type  string `json:"type"`
			Items []struct {
				Text      string `json:"text"`
				Completed bool   `json:"completed"`
			} `json:"items"`
		} `json:"item"`
	}
	if json.Unmarshal(line, &raw) != nil {
		return nil, false
	}
	switch {
	case raw.Type == "assistant" && len(raw.Message.Content) > 0:
		// Claude Code: a tool_use block named TodoWrite; the last one wins.
		var blocks []struct {
			Type  string    `json:"type"`
			Name  string    `json:"name"`
			Input planTodos `json:"input"`
		}
		if json.Unmarshal(raw.Message.Content, &blocks) != nil {
			return nil, false
		}
		for _, b := range slices.Backward(blocks) {
			if it, ok := b.Input.items(); ok && b.Type == "tool_use" && b.Name == "TodoWrite" {
				return it, true
			}
		}
		return nil, false
	case raw.Payload != nil && raw.Payload.Type == "function_call" && raw.Payload.Name == "update_plan":
		// Codex rollout: the arguments are a JSON string.
		var p planTodos
		if json.Unmarshal([]byte(raw.Payload.Arguments), &p) != nil {
			return nil, false
		}
		return p.items()
	case raw.Item != nil && raw.Item.Type == "todo_list":
		// codex exec --json: item.updated / item.completed with todo_list.
		out := make([]PlanItem, 0, len(raw.Item.Items))
		for _, t := range raw.Item.Items {
			st := PlanPending
			if t.Completed {
				st = PlanCompleted
			}
			out = append(out, PlanItem{Text: t.Text, Status: st})
		}
		return out, true
	}
	return nil, false
}
