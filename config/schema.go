package config

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// valueKind is the type of a configuration value.
type valueKind int

const (
	kindInt    valueKind = iota // an integer in [min, max]
	kindBool                    // true or false
	kindString                  // a string, possibly restricted
	kindList                    // a list of non-empty strings
)

// keySpec describes one configuration key: its path, type, rules and where
// it lives in its section.
type keySpec struct {
	path    string
	env     string
	meaning string
	kind    valueKind
	section int   // index of the section in loader.sections
	index   []int // field index path from the section's struct

	min, max   int           // kindInt: the bounds
	unit       time.Duration // kindInt of a time.Duration field: what 1 means (its key ends in Ms or Seconds)
	enum       []string      // kindString: the allowed values; nil means any
	nonEmpty   bool          // kindString: "" is rejected; kindList: [] is rejected
	envVarName bool          // kindString: "" or an environment variable name
	reserved   bool          // kindBool: only false is accepted
	secret     bool          // the value is never shown
	def        string        // the default, in environment form
}

// The struct tags a section's fields use.
const (
	tagConfig = "config" // the rule vocabulary: see parseRules
	tagHelp   = "help"   // one line saying what the key does
)

var validatorType = reflect.TypeFor[interface{ Validate() error }]()

// sectionSpecs returns the keys of the section struct t at path, in field
// order, or an error naming the first field Add must refuse.
func sectionSpecs(path string, t reflect.Type, section int) ([]keySpec, error) {
	var specs []keySpec
	var walk func(prefix string, t reflect.Type, index []int) error
	walk = func(prefix string, t reflect.Type, index []int) error {
		keys := 0
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			where := t.String() + "." + f.Name
			if f.Anonymous {
				return fmt.Errorf("%s: embedded fields are not supported", where)
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				return fmt.Errorf("%s: needs a json tag naming its key", where)
			}
			if !isKeyName(name) {
				return fmt.Errorf("%s: key %q is not an ASCII letter followed by letters and digits", where, name)
			}
			keyPath := joinPath(prefix, name)
			fieldIndex := append(index[:len(index):len(index)], i)
			keys++
			if f.Type.Kind() == reflect.Struct {
				if f.Tag.Get(tagConfig) != "" {
					return fmt.Errorf("%s: a nested section takes no %s tag", where, tagConfig)
				}
				if err := walk(keyPath, f.Type, fieldIndex); err != nil {
					return err
				}
				continue
			}
			s := keySpec{path: keyPath, env: EnvName(keyPath), meaning: f.Tag.Get(tagHelp),
				section: section, index: fieldIndex, min: 1, max: maxConfigInt}
			switch f.Type {
			case reflect.TypeFor[int]():
				s.kind = kindInt
			case reflect.TypeFor[time.Duration]():
				s.kind, s.unit = kindInt, durationUnit(name)
				if s.unit == 0 {
					return fmt.Errorf("%s: a time.Duration key's name ends in Ms or Seconds (its unit)", where)
				}
			case reflect.TypeFor[bool]():
				s.kind = kindBool
			case reflect.TypeFor[string]():
				s.kind = kindString
			case reflect.TypeFor[[]string]():
				s.kind = kindList
			default:
				return fmt.Errorf("%s: type %s is not supported (int, time.Duration, bool, string, []string or a struct)", where, f.Type)
			}
			if err := parseRules(&s, f.Tag.Get(tagConfig)); err != nil {
				return fmt.Errorf("%s: tag %s:%q: %v", where, tagConfig, f.Tag.Get(tagConfig), err)
			}
			if s.unit != 0 && s.min < 0 {
				return fmt.Errorf("%s: a time.Duration key takes no negative minimum", where)
			}
			specs = append(specs, s)
		}
		if keys == 0 {
			return fmt.Errorf("%s (key %q) has no keys", t, prefix)
		}
		return nil
	}
	if err := walk(path, t, nil); err != nil {
		return nil, err
	}
	return specs, nil
}

// parseRules applies a config tag: comma-separated rules, each allowed only
// for the kinds it makes sense for:
//
//	min=N      int: the smallest value (default 1)
//	max=N      int: the largest value (default 2^53-1)
//	enum=a|b   string: one of these values, case-sensitive
//	nonempty   string: not ""; []string: at least one item
//	envvar     string: "" or an environment variable name; the variable
//	           it names may carry the MCPRT_ prefix without being unknown
//	reserved   bool: must stay false
//	secret     any: the value is never shown (errors, Keys)
func parseRules(s *keySpec, tag string) error {
	if tag == "" {
		return nil
	}
	for rule := range strings.SplitSeq(tag, ",") {
		name, arg, hasArg := strings.Cut(rule, "=")
		known, takesArg, applies := ruleFits(name, s.kind)
		switch {
		case !known:
			return fmt.Errorf("unknown rule %q", name)
		case !applies:
			return fmt.Errorf("rule %s does not apply to this field's type", name)
		case takesArg && (!hasArg || arg == ""):
			return fmt.Errorf("%s needs a value", name)
		case !takesArg && hasArg:
			return fmt.Errorf("%s takes no value", name)
		}
		switch name {
		case "min", "max":
			n, err := strconv.Atoi(arg)
			if err != nil || n < -maxConfigInt || n > maxConfigInt {
				return fmt.Errorf("%s=%s is not an integer within ±(2^53-1)", name, arg)
			}
			if name == "min" {
				s.min = n
			} else {
				s.max = n
			}
		case "enum":
			s.enum = strings.Split(arg, "|")
			if slices.Contains(s.enum, "") {
				return fmt.Errorf("enum=%s has an empty value", arg)
			}
		case "nonempty":
			s.nonEmpty = true
		case "envvar":
			s.envVarName = true
		case "reserved":
			s.reserved = true
		case "secret":
			s.secret = true
		}
	}
	switch {
	case s.min > s.max:
		return fmt.Errorf("min %d > max %d", s.min, s.max)
	case s.enum != nil && (s.nonEmpty || s.envVarName):
		return fmt.Errorf("enum excludes nonempty and envvar")
	}
	return nil
}

// ruleFits says whether the rule name is known, whether it takes a value
// and whether it applies to a key of kind k.
func ruleFits(name string, k valueKind) (known, takesArg, applies bool) {
	switch name {
	case "min", "max":
		return true, true, k == kindInt
	case "enum":
		return true, true, k == kindString
	case "envvar":
		return true, false, k == kindString
	case "nonempty":
		return true, false, k == kindString || k == kindList
	case "reserved":
		return true, false, k == kindBool
	case "secret":
		return true, false, true
	}
	return false, false, false
}

// isKeyName reports whether name can be a key: an ASCII letter, then ASCII
// letters and digits. Such keys map to distinct-looking variable names.
func isKeyName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(isASCIILower(c) || isASCIIUpper(c) || i > 0 && isASCIIDigit(c)) {
			return false
		}
	}
	return name != ""
}

// isKeyPath reports whether path is "" or dot-separated key names.
func isKeyPath(path string) bool {
	if path == "" {
		return true
	}
	for seg := range strings.SplitSeq(path, ".") {
		if !isKeyName(seg) {
			return false
		}
	}
	return true
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// field returns the key's field in the section value v (a struct).
func (s *keySpec) field(v reflect.Value) reflect.Value {
	return v.FieldByIndex(s.index)
}

// get returns the key's value in the section value v: an int (a
// time.Duration in its unit), bool, string or []string.
func (s *keySpec) get(v reflect.Value) any {
	if s.unit != 0 {
		return int(s.field(v).Int() / int64(s.unit))
	}
	return s.field(v).Interface()
}

// durationUnit is the unit of a time.Duration key by its name's suffix:
// a millisecond for "…Ms", a second for "…Seconds"; 0 for neither.
func durationUnit(name string) time.Duration {
	switch {
	case strings.HasSuffix(name, "Ms"):
		return time.Millisecond
	case strings.HasSuffix(name, "Seconds"):
		return time.Second
	}
	return 0
}

// set stores x, of the key's type, in the section value v.
func (s *keySpec) set(v reflect.Value, x any) {
	if s.unit != 0 { // saturating: 2^53-1 ms is longer than a Duration holds
		n := int64(x.(int))
		s.field(v).SetInt(int64(time.Duration(min(n, math.MaxInt64/int64(s.unit))) * s.unit))
		return
	}
	s.field(v).Set(reflect.ValueOf(x))
}

// validators calls f with the address of every struct in the section value
// v (addressable) that has a Validate() error method, innermost first, and
// the struct's key path.
func validators(path string, v reflect.Value, f func(path string, val interface{ Validate() error }) error) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || name == "-" || sf.Type.Kind() != reflect.Struct {
			continue
		}
		if err := validators(joinPath(path, name), v.Field(i), f); err != nil {
			return err
		}
	}
	if p := v.Addr(); p.Type().Implements(validatorType) {
		return f(path, p.Interface().(interface{ Validate() error }))
	}
	return nil
}
