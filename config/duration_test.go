package config

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// durationSection has a key of each unit.
type durationSection struct {
	Wait  time.Duration `json:"waitMs" config:"min=0" help:"A wait, in milliseconds."`
	Lease time.Duration `json:"leaseSeconds" config:"max=604800" help:"A lease, in seconds."`
}

func TestDurationKeys(t *testing.T) {
	for _, tc := range []struct {
		name      string
		file, env string
		wantWait  time.Duration
		wantLease time.Duration
		wantErr   string // a substring of the error; "" for none
	}{
		{name: "defaults", wantWait: 1500 * time.Millisecond, wantLease: time.Hour},
		{name: "file ms", file: `{"d":{"waitMs":250}}`, wantWait: 250 * time.Millisecond, wantLease: time.Hour},
		{name: "env seconds", env: "MCPRT_D_LEASE_SECONDS=90", wantWait: 1500 * time.Millisecond, wantLease: 90 * time.Second},
		{name: "zero allowed by min=0", env: "MCPRT_D_WAIT_MS=0", wantLease: time.Hour},
		{name: "longer than a Duration saturates", env: "MCPRT_D_WAIT_MS=9007199254740991",
			wantWait: math.MaxInt64 / time.Millisecond * time.Millisecond, wantLease: time.Hour},
		{name: "max in the key's unit", env: "MCPRT_D_LEASE_SECONDS=604801", wantErr: "d.leaseSeconds"},
		{name: "negative", file: `{"d":{"waitMs":-1}}`, wantErr: "must be >= 0"},
		{name: "not an integer", env: "MCPRT_D_WAIT_MS=1.5", wantErr: "d.waitMs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := durationSection{Wait: 1500 * time.Millisecond, Lease: time.Hour}
			l := newLoader()
			if err := l.Add("d", &d); err != nil {
				t.Fatal(err)
			}
			path := ""
			if tc.file != "" {
				path = writeConfig(t, tc.file)
			}
			var env []string
			if tc.env != "" {
				env = []string{tc.env}
			}
			err := l.Load(path, env)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load = %v, want an error naming %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case d.Wait != tc.wantWait || d.Lease != tc.wantLease:
				t.Errorf("loaded %v, %v; want %v, %v", d.Wait, d.Lease, tc.wantWait, tc.wantLease)
			}
		})
	}
}

// TestDurationDefaultsShowInTheKeysUnit: Keys shows a Duration's default
// as the integer of its unit, as the documented interface has it.
func TestDurationDefaultsShowInTheKeysUnit(t *testing.T) {
	d := durationSection{Wait: 1500 * time.Millisecond, Lease: time.Hour}
	l := newLoader()
	if err := l.Add("d", &d); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, k := range l.Keys() {
		got[k.Path] = k.Default
	}
	if got["d.waitMs"] != "1500" || got["d.leaseSeconds"] != strconv.Itoa(3600) {
		t.Errorf("defaults = %v, want d.waitMs 1500 and d.leaseSeconds 3600", got)
	}
}

func TestDurationFieldsNeedAUnit(t *testing.T) {
	for _, section := range []any{
		&struct {
			Wait time.Duration `json:"wait" help:"no unit in the name"`
		}{},
		&struct {
			Wait time.Duration `json:"waitMs" config:"min=-5" help:"a negative minimum"`
		}{},
	} {
		if err := newLoader().Add("d", section); err == nil {
			t.Errorf("Add(%T) accepted a malformed duration key", section)
		}
	}
}
