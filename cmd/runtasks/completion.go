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

// completers are the ids shell completion offers: epics and tasks from bd
// (one bd list of the open issues), sessions from the state store. They
// read the configuration as the hooks do (an untrusted project.yaml is not
// read: a Tab runs nothing it names), and give nothing on any failure.
type completers struct{ f *Factory }

// registerCompletions completes --epic and --session for arm, disarm,
// status, claim, report and run, and claim's task id.
func registerCompletions(f *Factory, root *cobra.Command) {
	c := completers{f}
	for _, cmd := range root.Commands() {
		if !slices.Contains([]string{"arm", "status", "report", "run", "disarm", "claim"}, cmd.Name()) {
			continue
		}
		if cmd.Flags().Lookup("epic") != nil {
			_ = cmd.RegisterFlagCompletionFunc("epic", c.epics(cmd.Name() == "status" || cmd.Name() == "report"))
		}
		// run's --session is fresh|resume, not an id.
		if cmd.Flags().Lookup("session") != nil && cmd.Name() != "run" {
			_ = cmd.RegisterFlagCompletionFunc("session", c.sessions)
		}
		if cmd.Name() == "claim" {
			cmd.ValidArgsFunction = c.tasks
		}
	}
}

// issues lists the open issues: epics (epic true) or the tasks that can
// be claimed, as "id\ttitle".
func (c completers) issues(cmd *cobra.Command, epic bool, prefix string) []string {
	cfg, _, err := c.f.LoadHookConfig(cmd, "")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	client := newBeadsClient(c.f, cfg)
	client.Timeout = completionTimeout
	issues, err := client.Open(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, is := range issues {
		if (is.IssueType == "epic") == epic && strings.HasPrefix(is.ID, prefix) {
			out = append(out, is.ID+"\t"+is.Title)
		}
	}
	return out
}

func (c completers) epics(logged bool) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		out := c.issues(cmd, true, prefix)
		if logged {
			// status and report also know the epics of the decision log's
			// loops, closed ones included.
			cfg, _, err := c.f.LoadHookConfig(cmd, "")
			if err != nil {
				return out, cobra.ShellCompDirectiveNoFileComp
			}
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

func (c completers) tasks(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return c.issues(cmd, false, prefix), cobra.ShellCompDirectiveNoFileComp
}

// sessions are the sessions the state store knows: bound (armed or
// holding claims) or with a loop, as "id\tepic".
func (c completers) sessions(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	cfg, _, err := c.f.LoadHookConfig(cmd, "")
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
