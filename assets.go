// Package runtasks holds files from the repository root that the program
// ships: the commented project.yaml example that `runtasks install` writes
// into a project that has none. The command itself is cmd/runtasks.
package runtasks

import _ "embed"

// ProjectYAMLExample is project.yaml.example: every key with its default
// and a comment.
//
//go:embed project.yaml.example
var ProjectYAMLExample []byte
