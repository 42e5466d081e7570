// Package setting holds the error that a package below the product's
// configuration returns for an invalid setting: which key, its value, why
// it is refused and what would be accepted. Packages that package config
// imports (the Streamable HTTP transport, the messaging service) report
// with it without importing config; config turns it into a *config.Error
// with the key's environment variable and the value's source.
//
// It imports nothing outside the standard library and keeps no state.
package setting
