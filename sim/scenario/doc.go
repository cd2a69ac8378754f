// Package scenario defines throttlesim's scenario file: the YAML types, a
// strict loader that reports every problem with file, line, column and field
// path, the documented defaults (in one place, Default and the setDefaults
// methods), validation, and --set overrides by YAML path.
//
// Durations always carry a unit ("30s", "2m", "500ms"); rates carry a unit of
// time ("10/s", "600/m", "5/100ms"). A bare number where a duration or a
// rate is expected is an error, never a silent guess.
package scenario
