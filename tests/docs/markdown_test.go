package docs

import (
	"fmt"
	"regexp"
	"strings"
)

// block is one fenced block of a markdown file.
type block struct {
	line   int    // of the opening fence, 1-based
	lang   string // the first word of the fence's info string
	text   string // the lines between the fences, each ending in "\n"
	marker string // "", markServer or markSkip
	reason string // why a skipped block is skipped
}

// Markers, as written in `<!-- doc-test: MARKER -->` right before a fence.
const (
	markServer = "server"
	markSkip   = "skip"
)

// shellLangs are the languages of the blocks the test runs.
var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

func (b block) shell() bool { return shellLangs[b.lang] }

var (
	fenceRE   = regexp.MustCompile("^ {0,3}(```+|~~~+)(.*)$")
	commentRE = regexp.MustCompile(`^\s*<!--.*doc-test`)
	markerRE  = regexp.MustCompile(`^\s*<!--\s*doc-test:\s*(\S+)\s*(.*?)\s*-->\s*$`)
)

// parseBlocks returns the fenced blocks of a markdown file and every
// problem with its fences and markers, each as "LINE: what".
func parseBlocks(md string) ([]block, []string) {
	var (
		blocks   []block
		problems []string
		cur      *block
		closing  string // the fence that closes cur
		pending  *block // a marker waiting for its fence, as a block with line = the marker's
	)
	lines := strings.Split(strings.TrimSuffix(md, "\n"), "\n")
	for i, l := range lines {
		n := i + 1
		if cur != nil {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, closing) && strings.Trim(t, closing[:1]) == "" {
				blocks = append(blocks, *cur)
				cur = nil
				continue
			}
			cur.text += l + "\n"
			continue
		}
		if m := fenceRE.FindStringSubmatch(l); m != nil {
			b := block{line: n, lang: firstWord(m[2])}
			if b.lang == "" {
				problems = append(problems, fmt.Sprintf("%d: a fence without a language: write sh, bash or console to run the block, or text (or the block's language) for one that is not a command", n))
			}
			if pending != nil {
				if b.shell() {
					b.marker, b.reason = pending.marker, pending.reason
				} else {
					problems = append(problems, fmt.Sprintf("%d: a doc-test marker before a %q block: only shell blocks are run, so only they take markers", pending.line, b.lang))
				}
				pending = nil
			}
			cur, closing = &b, m[1]
			continue
		}
		if pending != nil {
			problems = append(problems, fmt.Sprintf("%d: a doc-test marker not on the line right before a fence", pending.line))
			pending = nil
		}
		if !commentRE.MatchString(l) {
			continue // prose may name doc-test markers; only a comment line is one
		}
		m := markerRE.FindStringSubmatch(l)
		switch {
		case m == nil:
			problems = append(problems, fmt.Sprintf("%d: %q is not a doc-test marker: write <!-- doc-test: server --> or <!-- doc-test: skip REASON -->", n, strings.TrimSpace(l)))
		case m[1] == markServer && m[2] == "":
			pending = &block{line: n, marker: markServer}
		case m[1] == markSkip && m[2] != "":
			pending = &block{line: n, marker: markSkip, reason: m[2]}
		case m[1] == markSkip:
			problems = append(problems, fmt.Sprintf("%d: doc-test skip without a reason: say what the block needs", n))
		default:
			problems = append(problems, fmt.Sprintf("%d: unknown doc-test marker %q (known: server, skip REASON)", n, strings.TrimSpace(m[1]+" "+m[2])))
		}
	}
	if cur != nil {
		problems = append(problems, fmt.Sprintf("%d: the fence opened here is never closed", cur.line))
	}
	if pending != nil {
		problems = append(problems, fmt.Sprintf("%d: a doc-test marker at the end of the file, before no block", pending.line))
	}
	return blocks, problems
}

func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return strings.ToLower(f[0])
}

// script is what bash runs for b: the block as written, or for a console
// block the commands after its "$ " prompts.
func (b block) script() string {
	if b.lang != "console" {
		return b.text
	}
	var out strings.Builder
	cont := false
	for _, l := range strings.SplitAfter(b.text, "\n") {
		switch {
		case cont:
		case strings.HasPrefix(l, "$ "):
			l = strings.TrimPrefix(l, "$ ")
		default:
			continue // output
		}
		out.WriteString(l)
		cont = strings.HasSuffix(strings.TrimRight(l, "\n"), "\\")
	}
	return out.String()
}
