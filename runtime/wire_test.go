package runtime

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

var sc = NewScript(ScriptSpec{Name: "t.S", File: "s.lua", Body: "return 1"})

func TestReplyErrorCode(t *testing.T) {
	for msg, code := range map[string]string{
		"OUT_OF_STOCK 3 left": "OUT_OF_STOCK",
		"ERR OUT_OF_STOCK":    "OUT_OF_STOCK",
		"WRONGTYPE Operation": "WRONGTYPE",
		"NOSCRIPT":            "NOSCRIPT",
	} {
		assert.Equal(t, code, (&ReplyError{Msg: msg}).Code(), msg)
	}
	assert.True(t, IsNoScript(&ReplyError{Msg: "ERR NOSCRIPT x"}))
	assert.True(t, IsNoScript(errors.Join(errors.New("ctx"), &ReplyError{Msg: "NOSCRIPT x"})))
	assert.False(t, IsNoScript(errors.New("NOSCRIPT but not a reply")))
	assert.True(t, IsNoScript(&ReplyError{Msg: "NOSCRIPT No matching script. Please use EVAL."}))
	// Raised inside a script: Redis appends where.
	assert.False(t, IsNoScript(&ReplyError{Msg: "NOSCRIPT No matching script. Please use EVAL. script: 9d1c2d1f3d7c0e4a, on @user_script:2."}))
	assert.False(t, IsNoScript(&ReplyError{Msg: "NOSCRIPT x script: 9d1c, on =[C]:-1."}))
	// Returned by a script: marked by the wrapped body.
	assert.False(t, IsNoScript(&ReplyError{Msg: "LUAGEN NOSCRIPT No matching script. Please use EVAL."}))
}

func TestUnmark(t *testing.T) {
	for msg, want := range map[string]string{
		"LUAGEN NOSCRIPT x":             "NOSCRIPT x",
		"LUAGEN ERR NOSCRIPT x":         "NOSCRIPT x",
		"ERR LUAGEN NOSCRIPT x":         "NOSCRIPT x",
		"LUAGEN LUAGEN x":               "LUAGEN x",
		"LUAGEN":                        "LUAGEN",
		"NOSCRIPT x":                    "NOSCRIPT x",
		"OTHER":                         "OTHER",
		"LUAGEN MOVED 1 a:1":            "MOVED 1 a:1",
		"LUAGEN% x %2DREADONLY %252D y": "x -READONLY %2D y",
	} {
		assert.Equal(t, want, unmark(&ReplyError{Msg: msg}).Msg, msg)
	}
}

func TestWrapBodyKeepsLines(t *testing.T) {
	for _, body := range []string{
		"return 1", "return 1\n", "#!lua\nreturn 1", "#!lua flags=no-writes\n\n-- c\nreturn 1 -- c",
		"", "#!lua\n", "a\r\nb\r\n", "x -- no newline at the end",
	} {
		w := wrapBody(body)
		extra := strings.Count(w, "\n") - strings.Count(body, "\n")
		assert.Contains(t, []int{0, 1}, extra, "%q → %q", body, w)
		if extra == 1 {
			assert.True(t, strings.HasPrefix(w[strings.LastIndexByte(w, '\n')+1:], "end)"), "the epilogue has a line of its own: %q", w)
		}
		wl, bl := strings.Split(w, "\n"), strings.Split(body, "\n")
		for i := range bl[:len(bl)-1] {
			assert.True(t, strings.HasSuffix(wl[i], bl[i]), "line %d of %q keeps its text: %q", i+1, body, wl[i])
		}
		if strings.HasPrefix(body, "#!") {
			assert.Equal(t, bl[0], wl[0], "the shebang stays first and unchanged")
		}
	}
	assert.Equal(t, "#!lua", wrapBody("#!lua"), "Redis refuses a shebang without a line feed; left for it to say so")
	assert.Contains(t, wrapBody("return ..."), "(function(...) return ...")
	assert.Contains(t, wrapBody("return 1"), "(function() return 1")
}

func TestScriptLine(t *testing.T) {
	for msg, want := range map[string]int{
		"ERR user_script:3: Script attempted to access nonexistent global variable 'foo' script: e242c1, on @user_script:3.": 3,
		"WRONGTYPE Operation against a key holding the wrong kind of value script: a7c3, on @user_script:12.":                12,
		"plain error": 0,
	} {
		got, ok := scriptLine(msg)
		assert.Equal(t, want, got, msg)
		assert.Equal(t, want != 0, ok, msg)
	}
}

func TestNewScriptSHA1(t *testing.T) {
	// The SHA1 is that of the body as sent (SCRIPT LOAD answers it; the
	// real-server tests check that), not of the .lua file.
	assert.Equal(t, "return 1", sc.Source())
	assert.Equal(t, "local r = (function() return 1\n"+strings.Replace(wrapEpilogue, "%s", "", 1), sc.Body())
	sum := sha1.Sum([]byte(sc.Body()))
	assert.Equal(t, hex.EncodeToString(sum[:]), sc.SHA1())
}
