//go:build !linux

package state

import "os"

// inPlaceMax is 0 where the kernel does not promise that a killed writer's
// small write is whole or absent: every state goes through a rename, and
// readers need no lock.
const inPlaceMax = 0

const openNoFollow = 0

func lockForWrite(*os.File) bool { return false }

func lockForRead(*os.File) {}
