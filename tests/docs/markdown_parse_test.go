package docs

import (
	"reflect"
	"slices"
	"testing"
)

// TestParseBlocks shows the conventions: which fences and markers are
// accepted, and the problem reported for each one that is not.
func TestParseBlocks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		md       string
		blocks   []block
		problems []string
	}{
		{
			name: "languages, markers, nested fences",
			md: "# T\n" +
				"```sh\nsluice scope create a\n```\n" + // 2
				"<!-- doc-test: server -->\n" +
				"```bash\nmake run\n```\n" + // 6
				"<!-- doc-test: skip needs a Mesos master -->\n" +
				"````console\n$ sluice cluster status\n```\n````\n" + // 10
				"```text\nsluice bench write|read\n```\n", // 14
			blocks: []block{
				{line: 2, lang: "sh", text: "sluice scope create a\n"},
				{line: 6, lang: "bash", text: "make run\n", marker: markServer},
				{line: 10, lang: "console", text: "$ sluice cluster status\n```\n", marker: markSkip, reason: "needs a Mesos master"},
				{line: 14, lang: "text", text: "sluice bench write|read\n"},
			},
		},
		{
			name:   "prose naming a marker is not one",
			md:     "Mark it with `<!-- doc-test: server -->`.\n```sh\nls\n```\n",
			blocks: []block{{line: 2, lang: "sh", text: "ls\n"}},
		},
		{
			name:     "a fence without a language",
			md:       "```\nls\n```\n",
			blocks:   []block{{line: 1, text: "ls\n"}},
			problems: []string{"1: a fence without a language: write sh, bash or console to run the block, or text (or the block's language) for one that is not a command"},
		},
		{
			name:     "an unknown marker",
			md:       "<!-- doc-test: cluster -->\n```sh\nls\n```\n",
			blocks:   []block{{line: 2, lang: "sh", text: "ls\n"}},
			problems: []string{`1: unknown doc-test marker "cluster" (known: server, skip REASON)`},
		},
		{
			name:     "a skip without a reason",
			md:       "<!-- doc-test: skip -->\n```sh\nls\n```\n",
			blocks:   []block{{line: 2, lang: "sh", text: "ls\n"}},
			problems: []string{"1: doc-test skip without a reason: say what the block needs"},
		},
		{
			name:     "a misspelt marker",
			md:       "<!-- doc-test server -->\n```sh\nls\n```\n",
			blocks:   []block{{line: 2, lang: "sh", text: "ls\n"}},
			problems: []string{`1: "<!-- doc-test server -->" is not a doc-test marker: write <!-- doc-test: server --> or <!-- doc-test: skip REASON -->`},
		},
		{
			name:     "a marker away from its block",
			md:       "<!-- doc-test: server -->\n\n```sh\nmake run\n```\n",
			blocks:   []block{{line: 3, lang: "sh", text: "make run\n"}},
			problems: []string{"1: a doc-test marker not on the line right before a fence"},
		},
		{
			name:     "a marker before a block that is not run",
			md:       "<!-- doc-test: skip output -->\n```text\nok\n```\n",
			blocks:   []block{{line: 2, lang: "text", text: "ok\n"}},
			problems: []string{`1: a doc-test marker before a "text" block: only shell blocks are run, so only they take markers`},
		},
		{
			name:     "a marker at the end",
			md:       "text\n<!-- doc-test: server -->\n",
			problems: []string{"2: a doc-test marker at the end of the file, before no block"},
		},
		{
			name:     "a fence never closed",
			md:       "```sh\nls\n",
			problems: []string{"1: the fence opened here is never closed"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocks, problems := parseBlocks(tc.md)
			if !reflect.DeepEqual(blocks, tc.blocks) {
				t.Errorf("blocks\n%+v\nwant\n%+v", blocks, tc.blocks)
			}
			if !slices.Equal(problems, tc.problems) {
				t.Errorf("problems\n%q\nwant\n%q", problems, tc.problems)
			}
		})
	}
}

// TestConsoleScript runs only the prompted lines of a console block.
func TestConsoleScript(t *testing.T) {
	b := block{lang: "console", text: "$ sluice scope create a\ncreated scope a\n$ sluice stream create a/b \\\n    --segments 2\ncreated stream a/b\n"}
	want := "sluice scope create a\nsluice stream create a/b \\\n    --segments 2\n"
	if got := b.script(); got != want {
		t.Errorf("script %q, want %q", got, want)
	}
	sh := block{lang: "sh", text: "$ not a prompt in sh\n"}
	if got := sh.script(); got != sh.text {
		t.Errorf("sh script %q, want the block as written", got)
	}
}
