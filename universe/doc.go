// Package universe owns Sluice's DC/OS Universe package (packaging version
// 4.0) and the checks that keep it installable.
//
// The package files live beside this file and are embedded (Files):
//
//	package.json            name, version, notes, packaging version 4.0
//	config.json             the install options, a JSON schema (draft 4)
//	marathon.json.mustache  the Marathon app that runs `sluice scheduler`
//	resource.json           the URI of the sluice binary tarball, and the
//	                        icons' https URLs (images/*.png in the
//	                        repository, not embedded)
//	schema/*.json           the project's own schemas for the three JSON
//	                        files, written from the Universe's published
//	                        constraints (schema/README.md says which)
//
// DC/OS installs the package by collecting the defaults of config.json into
// an options tree ({"service": {...}, "node": {...}, ...}), merging the
// user's options file over it, validating the result against config.json,
// and rendering marathon.json.mustache with the options plus resource.json
// as "resource". Package.Options and Package.Render do the same here, so the
// tests can render what DC/OS would and check it (CheckApp).
//
// Template rule: every value is rendered with triple braces ({{{x}}}, no
// HTML escaping), and every string option in config.json has an enum or a
// pattern that excludes whitespace, '"' and '\', so a valid options file
// always renders valid JSON. The scheduler's command line reads its values
// from the app's environment ("$SLUICE_..." inside double quotes), so no
// option value is ever parsed by the shell.
//
// Load and Check report failures wrapped around the sentinels below, so a
// caller (and the tests) can tell a non-ASCII file from a schema violation
// from a template that does not render a valid app.
package universe
