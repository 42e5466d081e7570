package core

import (
	"testing"
	"time"
)

func TestHealth(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		in   HealthInputs
		want HealthStatus
	}{
		{"idle", HealthInputs{0, 10, 0, 0}, StatusHealthy},
		{"80% is not degraded", HealthInputs{8, 10, 0, 0}, StatusHealthy},
		{"90% is degraded", HealthInputs{9, 10, 0, 0}, StatusDegraded},
		{"80 of 100 is not degraded", HealthInputs{80, 100, 0, 0}, StatusHealthy},
		{"81 of 100 is degraded", HealthInputs{81, 100, 0, 0}, StatusDegraded},
		{"4 of 5 is not degraded", HealthInputs{4, 5, 0, 0}, StatusHealthy},
		{"full is unhealthy", HealthInputs{10, 10, 0, 0}, StatusUnhealthy},
		{"max 1 idle", HealthInputs{0, 1, 0, 0}, StatusHealthy},
		{"max 1 full", HealthInputs{1, 1, 0, 0}, StatusUnhealthy},
		{"over max is unhealthy", HealthInputs{11, 10, 0, 0}, StatusUnhealthy},
		{"p99 100ms is not degraded", HealthInputs{0, 10, 100 * ms, 0}, StatusHealthy},
		{"p99 just over 100ms", HealthInputs{0, 10, 100*ms + 1, 0}, StatusDegraded},
		{"p99 500ms is degraded", HealthInputs{0, 10, 500 * ms, 0}, StatusDegraded},
		{"p99 just over 500ms", HealthInputs{0, 10, 500*ms + 1, 0}, StatusUnhealthy},
		{"2 exhausted is not unhealthy", HealthInputs{0, 10, 0, 2}, StatusHealthy},
		{"3 exhausted is unhealthy", HealthInputs{0, 10, 0, 3}, StatusUnhealthy},
		{"many exhausted", HealthInputs{0, 10, 0, 40}, StatusUnhealthy},
		{"degraded and 2 exhausted", HealthInputs{9, 10, 0, 2}, StatusDegraded},
		{"unhealthy wins over degraded", HealthInputs{9, 10, 600 * ms, 0}, StatusUnhealthy},
	}
	for _, tt := range tests {
		if got := Health(tt.in); got != tt.want {
			t.Errorf("%s: Health(%+v) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}
