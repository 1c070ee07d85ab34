package protobuf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// compileProto compiles .proto source text named name; the well-known
// types (google/protobuf/*.proto) may be imported, and files of dir.
func compileProto(name, text, dir string) (protoreflect.FileDescriptor, error) {
	src := &protocompile.SourceResolver{Accessor: func(path string) (_ io.ReadCloser, err error) {
		if path == name {
			return io.NopCloser(strings.NewReader(text)), nil
		}
		if dir == "" {
			return nil, os.ErrNotExist
		}
		return os.Open(filepath.Join(dir, path))
	}}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(src)}
	files, err := c.Compile(context.Background(), name)
	if err != nil {
		return nil, err
	}
	return files[0], nil
}

// loadFile compiles the .proto file at path.
func loadFile(path string) (protoreflect.FileDescriptor, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	fd, err := compileProto(filepath.Base(path), string(data), filepath.Dir(path))
	if err != nil {
		return nil, "", err
	}
	return fd, string(data), nil
}

// loadDescriptorSet reads a FileDescriptorSet (protoc
// --descriptor_set_out, with --include_imports).
func loadDescriptorSet(path string) (*protoregistry.Files, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("not a FileDescriptorSet: %w", err)
	}
	return protodesc.NewFiles(&set)
}

// findMessage finds the message named name (its full name, or its name
// alone when only one message has it) in file; "" is the file's first.
func findMessage(file protoreflect.FileDescriptor, name string) (protoreflect.MessageDescriptor, error) {
	var found []protoreflect.MessageDescriptor
	var walk func(ms protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			m := ms.Get(i)
			if string(m.FullName()) == name || string(m.Name()) == name {
				found = append(found, m)
			}
			walk(m.Messages())
		}
	}
	if name == "" {
		if file.Messages().Len() == 0 {
			return nil, errors.New("the file defines no message")
		}
		return file.Messages().Get(0), nil
	}
	walk(file.Messages())
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no message %s in %s", name, file.Path())
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("several messages are named %s in %s: give its full name", name, file.Path())
}

// messageIndexes is the path of m in its file, as Confluent's framing
// names it: the index among the file's messages, then among the nested.
func messageIndexes(m protoreflect.MessageDescriptor) []int {
	var path []int
	for d := protoreflect.Descriptor(m); ; {
		path = append([]int{d.Index()}, path...)
		parent, ok := d.Parent().(protoreflect.MessageDescriptor)
		if !ok {
			return path
		}
		d = parent
	}
}

// messageAt follows a message-index path in file.
func messageAt(file protoreflect.FileDescriptor, path []int) (protoreflect.MessageDescriptor, error) {
	ms := file.Messages()
	var m protoreflect.MessageDescriptor
	for _, i := range path {
		if i < 0 || i >= ms.Len() {
			return nil, fmt.Errorf("message index path %v is not in %s", path, file.Path())
		}
		m = ms.Get(i)
		ms = m.Messages()
	}
	if m == nil {
		return nil, errors.New("an empty message index path")
	}
	return m, nil
}
