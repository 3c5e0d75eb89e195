package main

import "github.com/spf13/cobra"

// userCommands are the commands a person types.
func userCommands(f *Factory) []*cobra.Command {
	return []*cobra.Command{
		newInstallCmd(f), newUninstallCmd(f), newTrustCmd(f), newUntrustCmd(f), newArmCmd(f), newDisarmCmd(f), newClaimCmd(f),
		newRunCmd(f), newStatusCmd(f), newReportCmd(f), newCheckCmd(f), newResetCmd(f), newPromptCmd(f),
		newConfigCmd(f), newDoctorCmd(f), newCodexCmd(f),
	}
}
