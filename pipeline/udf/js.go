package udf

import "errors"

func loadJS(f *Function) (impl, error) { return nil, errors.New("javascript: not yet") }
