package main

import "runtime/debug"

// buildKey names a build: what must be equal for two binaries to be built
// from the same source (build tags may differ).
func buildKey(bi *debug.BuildInfo) string {
	key := bi.GoVersion + " " + bi.Main.Path + "@" + bi.Main.Version + " " + bi.Main.Sum
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time", "vcs.modified":
			key += " " + s.Key + "=" + s.Value
		}
	}
	return key
}

// ownBuildKey is this binary's buildKey ("" when it carries no build
// information).
func ownBuildKey() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return buildKey(bi)
}
