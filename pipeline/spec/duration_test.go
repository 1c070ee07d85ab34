package spec_test

import (
	"testing"
	"time"

	"github.com/etld/etld/pipeline/spec"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "0", want: 0},
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "30d", want: 30 * 24 * time.Hour},
		{in: "106751d", want: 106751 * 24 * time.Hour},
		{in: "-1s", wantErr: `duration "-1s" is negative`},
		{in: "-1d", wantErr: `duration "-1d" is negative`},
		{in: "106752d", wantErr: `duration "106752d" is too long (at most 106751d)`},
		{in: "99999999999999999d", wantErr: `duration "99999999999999999d" is too long (at most 106751d)`},
		{in: "5", wantErr: `duration "5" needs a unit, such as 5ms or 5s`},
		{in: "d", wantErr: `want a duration such as 500ms, 5s or 1m, got "d"`},
	}
	for _, tt := range tests {
		got, err := spec.ParseDuration(tt.in)
		switch {
		case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
			t.Errorf("ParseDuration(%q) = %v, %v; want error %q", tt.in, got, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}
