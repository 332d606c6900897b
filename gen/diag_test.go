package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"
)

// TestDiagnostics runs Generate on each testdata/diag archive's .lua files,
// with its .go files as the package's Go files (Config.GoFiles), and
// compares the diagnostics with its "stderr" file, one
// "path:line:col: message" per line; -update rewrites "stderr". An archive
// whose stderr is empty is a negative case: nothing may be reported, and
// output must be generated.
func TestDiagnostics(t *testing.T) {
	files := goldenFiles(t, "diag")
	require.GreaterOrEqual(t, len(files), 25)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(file)
			require.NoError(t, err)
			cfg := archiveConfig(a)
			for _, f := range a.Files {
				if strings.HasSuffix(f.Name, ".go") {
					cfg.GoFiles = append(cfg.GoFiles, GoFile{Path: f.Name, Src: f.Data})
				}
			}
			out, diags := Generate(archiveSources(a, cfg), cfg)
			var got strings.Builder
			for _, d := range diags {
				got.WriteString(d.String() + "\n")
			}
			if len(diags) == 0 {
				assert.NotEmpty(t, out, "no diagnostics, so there must be output")
			} else {
				assert.Nil(t, out, "no output when there are diagnostics")
			}
			if *update {
				var keep []txtar.File
				for _, f := range a.Files {
					if f.Name != "stderr" {
						keep = append(keep, f)
					}
				}
				a.Files = append(keep, txtar.File{Name: "stderr", Data: []byte(got.String())})
				require.NoError(t, os.WriteFile(file, txtar.Format(a), 0o644))
				return
			}
			var want []byte
			found := false
			for _, f := range a.Files {
				if f.Name == "stderr" {
					want, found = f.Data, true
				}
			}
			require.True(t, found, "archive has no stderr file; run with -update")
			assert.Equal(t, string(want), got.String())
		})
	}
}
