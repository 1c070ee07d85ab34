package spec

import "gopkg.in/yaml.v3"

// ReadYAML parses a YAML file other than a pipeline (the daemon's
// etld.yaml) with the pipeline files' rules: syntax errors at file:line,
// ${VAR} expanded in every scalar (an unset variable is an error, $$ is a
// literal $). Decode the returned mapping with Decode. A file with no
// document gives a nil node and no error.
func ReadYAML(file string, data []byte, lookup func(string) (string, bool)) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	p := &parser{file: file, lookup: lookup}
	root := doc.Content[0]
	p.expand(root, "")
	p.redactErrors()
	return root, p.errs.Err()
}
