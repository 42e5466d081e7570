package core

import "time"

// timeCache formats the times of LogFields' records as slog.JSONHandler
// does, t.Round(0).AppendFormat(b, time.RFC3339Nano), byte for byte. It
// keeps the text of the last whole second (date, time of day and zone) and
// its location, so the records of one second cost only their fraction. The
// zero value is ready to use; it is not safe for concurrent use (the
// lockedWriter's mutex guards it).
type timeCache struct {
	ok   bool
	sec  int64          // the Unix second head and zone are for
	loc  *time.Location // their location
	head []byte         // "2006-01-02T15:04:05"
	zone []byte         // "Z" or "-07:00"
}

// appendTime appends t as RFC 3339 with nanoseconds, trailing zeros of the
// fraction dropped.
func (c *timeCache) appendTime(b []byte, t time.Time) []byte {
	t = t.Round(0)
	sec := t.Unix()
	if (!c.ok || sec != c.sec || t.Location() != c.loc) && !c.fill(t, sec) {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	b = append(b, c.head...)
	if ns := t.Nanosecond(); ns != 0 {
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i > 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := len(frac)
		for frac[n-1] == '0' {
			n--
		}
		b = append(b, frac[:n]...)
	}
	return append(b, c.zone...)
}

// fill formats the whole second of t (Unix second sec) and reports whether
// it has the shape the cache splits: a four-digit year, the time of day,
// then the zone. Other years are formatted by the standard library each
// time.
func (c *timeCache) fill(t time.Time, sec int64) bool {
	c.ok = false
	whole := t.Add(-time.Duration(t.Nanosecond()))
	s := whole.AppendFormat(c.head[:0], time.RFC3339Nano)
	if len(s) < 20 || s[4] != '-' || s[10] != 'T' || s[19] != 'Z' && s[19] != '+' && s[19] != '-' {
		return false
	}
	c.zone = append(c.zone[:0], s[19:]...)
	c.head = s[:19]
	c.sec, c.loc, c.ok = sec, t.Location(), true
	return true
}
