package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runtasks/runtasks/internal/state"
)

// completionTimeout bounds what completing one word may take: one bd
// query and a read of the state directory.
const completionTimeout = 2 * time.Second

// registerCompletions completes --epic and --session for arm, disarm,
// status, claim, report and run, and claim's task id: epics and tasks from
// bd (one bd list of the open issues), sessions from the state store. They
// read the configuration as the hooks do (an untrusted project.yaml is not
// read: a Tab runs nothing it names), and give nothing on any failure.
func registerCompletions(f *Factory, root *cobra.Command) {
	for _, cmd := range root.Commands() {
		switch name := cmd.Name(); name {
		case "claim":
			cmd.ValidArgsFunction = completeIssues(f, false, false)
			fallthrough
		case "arm", "status", "report", "disarm":
			_ = cmd.RegisterFlagCompletionFunc("session", completeSessions(f))
			fallthrough
		case "run": // its --session is fresh|resume, not an id
			// A command without the flag refuses its completion (the error is dropped).
			_ = cmd.RegisterFlagCompletionFunc("epic", completeIssues(f, true, name == "status" || name == "report"))
		}
	}
}

// completeIssues offers the open issues as "id\ttitle": epics (epic true)
// or the tasks that can be claimed (claim's one argument); logged adds the
// epics of the decision log's loops, closed ones included (status, report).
func completeIssues(f *Factory, epic, logged bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		cfg, _, err := f.LoadHookConfig(cmd, "")
		if err != nil || (!epic && len(args) > 0) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		var out []string
		issues, _ := newBeadsClient(f, cfg).Open(ctx) // ctx bounds bd too
		for _, is := range issues {
			if (is.IssueType == "epic") == epic && strings.HasPrefix(is.ID, prefix) {
				out = append(out, is.ID+"\t"+is.Title)
			}
		}
		if logged {
			sts, _ := (&state.Store{Dir: cfg.StateDir()}).List()
			for _, st := range sts {
				if st.Epic != state.NoEpic && strings.HasPrefix(st.Epic, prefix) && !slices.ContainsFunc(out, func(s string) bool { return strings.HasPrefix(s, st.Epic+"\t") }) {
					out = append(out, st.Epic)
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeSessions offers the sessions the state store knows: bound (armed
// or holding claims) or with a loop, as "id\tepic".
func completeSessions(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		cfg, _, err := f.LoadHookConfig(cmd, "")
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		store := &state.Store{Dir: cfg.StateDir()}
		seen := map[string]bool{}
		var out []string
		add := func(session, epic string) {
			if session == "" || seen[session] || !strings.HasPrefix(session, prefix) {
				return
			}
			seen[session] = true
			if epic != "" && epic != state.NoEpic {
				session += "\t" + epic
			}
			out = append(out, session)
		}
		bs, _ := store.Bindings()
		for _, b := range bs {
			add(b.Session, b.Epic)
		}
		sts, _ := store.List()
		for _, st := range sts {
			add(st.Session, st.Epic)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
