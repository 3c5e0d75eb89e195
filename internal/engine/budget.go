package engine

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/runtasks/runtasks/internal/config"
	"github.com/runtasks/runtasks/internal/state"
	"github.com/runtasks/runtasks/internal/usage"
)

// budget allows the stop, checks skipped, once workflow.budget is spent by
// the session's loop or every loop on the epic (this stop included).
func (d *decider) budget() (Decision, bool) {
	b := d.cfg.Workflow.Budget
	if b == (config.Budget{}) {
		return Decision{}, false
	}
	s := d.st.Spent
	epic := s.Plus(d.in.OthersSpent[d.in.Epic]) // read only with an epic
	var spent string
	switch {
	case b.SessionTokens > 0 && s.Total() >= int64(b.SessionTokens):
		spent = fmt.Sprintf("session budget spent: %s of %s tokens", usage.FormatTokens(s.Total()), usage.FormatTokens(int64(b.SessionTokens)))
	case b.SessionCost > 0 && s.Cost >= b.SessionCost:
		spent = fmt.Sprintf("session budget spent: %s of %s", usage.FormatCost(s.Cost), usage.FormatCost(b.SessionCost))
	case d.in.Epic != "" && b.EpicTokens > 0 && epic.Total() >= int64(b.EpicTokens):
		spent = fmt.Sprintf("epic %s budget spent: %s of %s tokens", d.in.Epic, usage.FormatTokens(epic.Total()), usage.FormatTokens(int64(b.EpicTokens)))
	case d.in.Epic != "" && b.EpicCost > 0 && epic.Cost >= b.EpicCost:
		spent = fmt.Sprintf("epic %s budget spent: %s of %s", d.in.Epic, usage.FormatCost(epic.Cost), usage.FormatCost(b.EpicCost))
	default:
		return Decision{}, false
	}
	return Decision{Outcome: state.OutcomeBudget, Why: spent + "; checks skipped",
		SystemMessage: "runtasks: " + spent + " (workflow.budget); stop allowed with the checks skipped. " +
			"A person decides: raise the budget or arm the session again."}, true
}

// unpricedBudget says, once per loop and only when a cost budget is set,
// that tokens of a model without a price keep it from being enforced.
func (d *decider) unpricedBudget(dec Decision, spent *usage.Spent, unpricedBefore int64) Decision {
	b := d.cfg.Workflow.Budget
	if (b.SessionCost == 0 && b.EpicCost == 0) || spent == nil || spent.Unpriced == 0 || unpricedBefore > 0 {
		return dec
	}
	models := cmp.Or(strings.Join(usage.Unpriced(d.cfg.Usage.Prices, spent.Models), ", "), "a model not named")
	msg := "the cost budget (workflow.budget) cannot be enforced: no price for " + models + " (usage.prices)"
	dec.Why += " · " + msg
	dec.SystemMessage = strings.TrimSpace(dec.SystemMessage + " runtasks: " + msg + ".")
	return dec
}
