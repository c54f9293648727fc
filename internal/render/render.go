// Package render fills the text templates hadrill generates configs from
// (my.cnf, the proxy's configuration, keepalived.conf): a field the data lacks is an
// error, never an empty string in a config.
package render

import (
	"bytes"
	"fmt"
	"text/template"
)

// Text renders the template src (named name in errors) with data.
func Text(name, src string, data any) (string, error) {
	t, err := template.New(name).Option("missingkey=error").Parse(src)
	if err != nil {
		return "", fmt.Errorf("template %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return "", fmt.Errorf("template %s: %w", name, err)
	}
	return buf.String(), nil
}
