package javautf8

import (
	"bufio"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAgainstJDK replays what the JDK's decoder made of byte strings
// (testdata/jdk17.txt, recorded with java on OpenJDK 17): random short
// strings over leads, continuation bytes and ASCII, and hand-picked
// malformed sequences of every kind.
func TestAgainstJDK(t *testing.T) {
	f, err := os.Open("testdata/jdk17.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		inHex, outHex, ok := strings.Cut(line, " ")
		in, err1 := hex.DecodeString(inHex)
		want, err2 := hex.DecodeString(outHex)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("bad line %q", line)
		}
		if got := AppendValid(nil, string(in)); string(got) != string(want) {
			t.Errorf("%s: got %x, Java gives %s", inHex, got, outHex)
		}
		n++
	}
	if err := sc.Err(); err != nil || n < 700 {
		t.Fatalf("read %d vectors: %v", n, err)
	}
}

// Valid text is kept byte for byte; the result is always valid UTF-8.
func FuzzAppendValid(f *testing.F) {
	for _, s := range []string{"", "plain", "é😀", "\xff\xfe", "a\xe2\x82b", "\xed\xa0\x80", "\xf0\x90\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := string(AppendValid([]byte("<"), s))[1:]
		if !utf8.ValidString(got) {
			t.Fatalf("%q gave invalid UTF-8 %q", s, got)
		}
		if utf8.ValidString(s) && got != s {
			t.Fatalf("valid %q changed to %q", s, got)
		}
		if n := strings.Count(got, Replacement) - strings.Count(s, Replacement); n < 0 || n > len(s) {
			t.Fatalf("%q: %d replacements", s, n)
		}
	})
}
