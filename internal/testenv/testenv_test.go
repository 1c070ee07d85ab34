package testenv

import (
	"regexp"
	"strings"
	"testing"
)

func TestUniqueName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	seen := map[string]bool{}
	for _, prefix := range []string{"orders", "", "_x", "9lives", "Mixed-Case.Topic", strings.Repeat("long", 30)} {
		for range 3 {
			name := UniqueName(t, prefix)
			if !valid.MatchString(name) {
				t.Errorf("UniqueName(%q) = %q; not a valid topic/table/index name", prefix, name)
			}
			if seen[name] {
				t.Errorf("UniqueName(%q) = %q twice", prefix, name)
			}
			seen[name] = true
		}
	}
	if name := UniqueName(t, "orders"); !strings.HasPrefix(name, "orders_testuniquename_") {
		t.Errorf("UniqueName(orders) = %q; want it to start with the prefix and the test name", name)
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"TestFoo/sub_case#01": "testfoo_sub_case_01",
		"--a..b--":            "a_b",
		"":                    "",
		"ÄÖ":                  "",
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestRequired(t *testing.T) {
	for _, c := range []struct {
		ci, require string
		want        bool
	}{
		{"", "", false}, {"true", "", true}, {"1", "", true}, {"false", "", false}, {"", "1", true}, {"false", "0", false},
	} {
		t.Setenv("CI", c.ci)
		t.Setenv(EnvRequire, c.require)
		if got := Required(); got != c.want {
			t.Errorf("CI=%q %s=%q: Required() = %v; want %v", c.ci, EnvRequire, c.require, got, c.want)
		}
	}
}

func TestKafkaSASL(t *testing.T) {
	t.Setenv(EnvKafkaSASL, " 127.0.0.1:19094 ")
	t.Setenv(EnvKafkaSASLUser, "")
	t.Setenv(EnvKafkaSASLPassword, "")
	if addr, user, pw := KafkaSASL(t); addr != "127.0.0.1:19094" || user != DefaultKafkaSASLUser || pw != DefaultKafkaSASLPassword {
		t.Errorf("KafkaSASL = %q %q %q; want the address and testenv's user %q / %q", addr, user, pw, DefaultKafkaSASLUser, DefaultKafkaSASLPassword)
	}
	t.Setenv(EnvKafkaSASLUser, "alice")
	t.Setenv(EnvKafkaSASLPassword, "s3cret")
	if _, user, pw := KafkaSASL(t); user != "alice" || pw != "s3cret" {
		t.Errorf("KafkaSASL with overrides = %q %q; want alice s3cret", user, pw)
	}
}
