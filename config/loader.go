package config

import (
	"errors"
	"fmt"
	"github.com/mcprt/mcprt/internal/setting"
	"reflect"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/core"
)

// loader loads configuration sections from a JSON file, the environment
// and their defaults, in one pass and with one set of strict rules. Each
// package that has settings adds its own section (Add); nothing is
// registered globally. See the package documentation for the rules and an
// example.
//
// A loader is not safe for concurrent use: add the sections, then Load,
// from one goroutine.
type loader struct {
	sections []loaderSection
	specs    []keySpec       // every key, in Add order then field order
	root     *configNode     // the object levels of the file
	byEnv    map[string]int  // index in specs by environment variable
	byPath   map[string]int  // index in specs by key path
	objects  map[string]bool // key paths that are objects
}

// loaderSection is one added section.
type loaderSection struct {
	path     string
	ptr      reflect.Value // the caller's pointer to its struct
	defaults reflect.Value // the struct as it was when added
}

// newLoader returns a loader with no sections.
func newLoader() *loader {
	return &loader{
		root:    &configNode{children: map[string]*configNode{}},
		byEnv:   map[string]int{},
		byPath:  map[string]int{},
		objects: map[string]bool{"": true},
	}
}

// newBaseLoader returns a loader holding the base sections of mcprt
// (server, transport, tools, resources, logging, security, aacp) backed by
// cfg, which holds their defaults (usually DefaultBase). Further sections
// can be added to it.
func newBaseLoader(cfg *Base) *loader {
	l := newLoader()
	if err := l.Add("", cfg); err != nil {
		panic("core: the base configuration is malformed: " + err.Error())
	}
	return l
}

// Add adds a section: section is a non-nil pointer to a struct that holds
// the section's defaults, and path is where the section lives in the file
// ("transport.http"; "" puts its fields at the top level). Sections may
// share an object ("transport" from one section, "transport.http" from
// another) but not a key.
//
// Each exported field is a key named by its json tag (a field tagged
// json:"-" is skipped); its type is int, bool, string, []string, or a
// struct, which is a nested object. A config tag restricts the value (see
// the package documentation) and a help tag says in one line what the key
// does. Add copies the struct as it is now: these are the defaults that
// Load starts from and Keys reports.
//
// Add returns an error, and adds nothing, when section is not a pointer to
// a struct, a field or tag is malformed, or a key or its environment
// variable is already taken. Such an error is a programming error.
func (l *loader) Add(path string, section any) error {
	ptr := reflect.ValueOf(section)
	if ptr.Kind() != reflect.Pointer || ptr.IsNil() || ptr.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("core: config section %q: %T is not a non-nil pointer to a struct", path, section)
	}
	if !isKeyPath(path) {
		return fmt.Errorf("core: config section %q: not a key path (dot-separated keys, each an ASCII letter then letters and digits)", path)
	}
	specs, err := sectionSpecs(path, ptr.Elem().Type(), len(l.sections))
	if err != nil {
		return fmt.Errorf("core: config section %q: %v", path, err)
	}
	// Check every key before adding any, so that a refused section leaves
	// the loader as it was.
	paths := map[string]bool{}
	envs := map[string]string{}
	for i := range specs {
		s := &specs[i]
		if err := l.checkFree(s.path, paths); err != nil {
			return fmt.Errorf("core: config section %q: %v", path, err)
		}
		if other, ok := l.byEnv[s.env]; ok {
			return fmt.Errorf("core: config section %q: key %s and key %s share the variable %s", path, s.path, l.specs[other].path, s.env)
		}
		if other, ok := envs[s.env]; ok || s.env == envConfig {
			if !ok {
				other = "the configuration file"
			}
			return fmt.Errorf("core: config section %q: key %s and %s share the variable %s", path, s.path, other, s.env)
		}
		paths[s.path] = true
		envs[s.env] = s.path
	}

	defaults := cloneSection(ptr.Elem())
	for i := range specs {
		s := &specs[i]
		s.def = s.text(s.get(defaults))
		if s.secret && s.def != "" {
			s.def = core.RedactedValue
		}
		l.byEnv[s.env] = len(l.specs)
		l.byPath[s.path] = len(l.specs)
		l.specs = append(l.specs, *s)
		l.root.insert(s.path)
		for p := s.path; strings.Contains(p, "."); {
			p = p[:strings.LastIndexByte(p, '.')]
			l.objects[p] = true
		}
	}
	l.sections = append(l.sections, loaderSection{path: path, ptr: ptr, defaults: defaults})
	return nil
}

// checkFree reports an error when the key path is taken: by a key of the
// loader or of the section being added (paths), or by an object, or when
// one of its parents is a key.
func (l *loader) checkFree(path string, paths map[string]bool) error {
	if _, ok := l.byPath[path]; ok || paths[path] {
		return fmt.Errorf("key %s is already defined", path)
	}
	if l.objects[path] {
		return fmt.Errorf("key %s is already an object", path)
	}
	for p := path; strings.Contains(p, "."); {
		p = p[:strings.LastIndexByte(p, '.')]
		if _, ok := l.byPath[p]; ok || paths[p] {
			return fmt.Errorf("key %s is inside %s, which is a key", path, p)
		}
	}
	return nil
}

// Keys returns every key of the added sections, in the order they were
// added (fields in declaration order), with their defaults: the table a
// README or --help shows. The default of a secret key is shown as
// "[REDACTED]".
func (l *loader) Keys() []Key {
	keys := make([]Key, len(l.specs))
	for i := range l.specs {
		s := &l.specs[i]
		keys[i] = Key{Path: s.path, Env: s.env, Default: s.def, Allowed: s.allowed(""), Meaning: s.meaning}
	}
	return keys
}

// Load fills every section: its defaults (as added), then the JSON file at
// path (skipped when path == ""), then the MCPRT_* variables of environ
// (os.Environ() form, "K=V"; of a name given twice the first counts, as
// with os.Getenv). The environment beats the file, which beats the
// defaults. Then the Validate() error method of every section struct, and
// of every nested struct, that has one is called (innermost first).
//
// Load is all or nothing: on success every section's struct holds its
// values; on failure none is changed and the error is a *Error. Of
// several problems the first is reported, in a fixed order: the file
// (structure in file order, then values in key order), the environment
// (in sorted variable order), the merged values (only a default can fail
// there), then the Validate methods in section order.
//
// Load is strict. It refuses an unknown, duplicate, null or wrongly typed
// key in the file, an invalid value from any source, and an MCPRT_*
// variable that is not a key's. MCPRT_CONFIG (the file's path, which the
// caller resolves) is accepted and ignored, and so is every variable named
// by a key tagged envvar.
func (l *loader) Load(path string, environ []string) error {
	work := make([]reflect.Value, len(l.sections))
	for i := range l.sections {
		work[i] = cloneSection(l.sections[i].defaults)
	}
	sources := make(map[string]string, len(l.specs))
	if path != "" {
		if err := l.applyFile(work, sources, path); err != nil {
			return err
		}
	}
	if err := l.applyEnv(work, sources, environ); err != nil {
		return err
	}
	// File and environment values were checked as they were applied, so
	// only a default can fail here (an empty server.version, say).
	for i := range l.specs {
		s := &l.specs[i]
		v := s.get(work[s.section])
		if reason := s.check(v); reason != "" {
			return s.newError(sourceOf(sources, s.path), s.text(v), reason)
		}
	}
	for i := range l.sections {
		err := validators(l.sections[i].path, work[i], func(p string, val interface{ Validate() error }) error {
			if err := val.Validate(); err != nil {
				return l.validateError(p, work, sources, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for i := range l.sections {
		l.sections[i].ptr.Elem().Set(cloneSection(work[i]))
	}
	return nil
}

// validateError turns an error of the Validate method of the struct at
// path into a *Error. The Key of a *Error or a *setting.Error is taken
// as relative to path; its empty fields are filled from that key.
func (l *loader) validateError(path string, work []reflect.Value, sources map[string]string, err error) error {
	var ce *Error
	if se := (*setting.Error)(nil); errors.As(err, &se) {
		ce = fromSetting(se)
	} else if !errors.As(err, &ce) {
		return &Error{Key: keyOrTop(path), Value: "(the section)", Allowed: "a consistent " + sectionName(path),
			Source: sourceOf(sources, path), Reason: err.Error()}
	}
	out := *ce
	out.Key = joinPath(path, ce.Key)
	i, ok := l.byPath[out.Key]
	if !ok {
		out.Key = keyOrTop(out.Key)
		if out.Source == "" {
			out.Source = sourceOf(sources, out.Key)
		}
		return &out
	}
	s := &l.specs[i]
	if out.Env == "" {
		out.Env = s.env
	}
	if out.Source == "" {
		out.Source = sourceOf(sources, s.path)
	}
	if out.Value == "" {
		out.Value = s.shown(s.text(s.get(work[s.section])))
	} else if s.secret {
		out.Value = core.RedactedValue
	}
	if out.Allowed == "" {
		out.Allowed = s.allowed("")
	}
	return &out
}

// keyOrTop returns path, or "(top level)" for the root: a Error
// with an empty Key is an unknown variable's.
func keyOrTop(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

func sectionName(path string) string {
	if path == "" {
		return "configuration"
	}
	return path + " section"
}

// sourceOf returns where the value at key path came from: "file" or
// "env" when any key at or under path was set there (env wins), else
// "default".
func sourceOf(sources map[string]string, path string) string {
	if src, ok := sources[path]; ok {
		return src
	}
	src := sourceDefault
	for p, s := range sources {
		if path == "" || strings.HasPrefix(p, path+".") {
			if s == sourceEnv {
				return sourceEnv
			}
			src = s
		}
	}
	return src
}

// cloneSection returns an addressable copy of the struct v whose []string
// fields, at any depth, are copies too: the copy shares nothing the caller
// could change.
func cloneSection(v reflect.Value) reflect.Value {
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	cloneLists(c)
	return c
}

func cloneLists(v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch {
		case f.Kind() == reflect.Struct:
			cloneLists(f)
		case f.Type() == reflect.TypeFor[[]string]() && !f.IsNil():
			f.Set(reflect.ValueOf(slices.Clone(f.Interface().([]string))))
		}
	}
}
