package testenv

import (
	"bytes"
	"encoding/binary"
)

// PostgresFraming frames PostgreSQL's protocol for a HoldProxy. A
// request is what a client sends up to a message the server answers at
// once: a pipeline of extended-protocol messages (Parse, Bind, Execute,
// ...) up to its Sync, a simple Query, the end of a COPY's data
// (CopyDone, CopyFail), a Terminate, and during the start the startup
// and password messages on their own. An answer is what the server sends
// up to its ReadyForQuery, or up to a CopyInResponse or CopyOutResponse
// (the answer to a COPY's Query). So a held pipeline counts as answered
// only once the server ran all of it. The client must not ask for TLS
// (sslmode=disable): the server's one-byte answer to that is not a
// message.
var PostgresFraming = Framing{Request: pgRequest, Response: pgAnswer}

// pgRequest frames one request: see PostgresFraming.
func pgRequest(buf []byte) (int, int32) {
	if len(buf) > 0 && buf[0] == 0 {
		// The startup message: a length, then a protocol code.
		if len(buf) < 4 {
			return 0, 0
		}
		n := int(binary.BigEndian.Uint32(buf))
		if n < 8 || len(buf) < n {
			return 0, 0
		}
		return n, 0
	}
	return pgGroup(buf, "SQcfXp")
}

// pgAnswer frames one answer: see PostgresFraming.
func pgAnswer(buf []byte) (int, int32) {
	return pgGroup(buf, "ZGH")
}

// pgGroup is the length of the messages at the start of buf up to and
// including the first whose type is in ends; 0 while buf does not hold
// all of them.
func pgGroup(buf []byte, ends string) (int, int32) {
	at := 0
	for {
		n := pgMessage(buf[at:])
		if n == 0 {
			return 0, 0
		}
		typ := buf[at]
		at += n
		if bytes.IndexByte([]byte(ends), typ) >= 0 {
			return at, 0
		}
	}
}

// pgMessage is the length of the typed message at the start of buf (a
// type byte, then a length that counts itself), 0 while it is not whole.
func pgMessage(buf []byte) int {
	if len(buf) < 5 {
		return 0
	}
	n := 1 + int(binary.BigEndian.Uint32(buf[1:]))
	if n < 5 || len(buf) < n {
		return 0
	}
	return n
}

// PostgresStatement matches a PostgreSQL request that carries SQL text
// starting with prefix (compared without regard to case): a simple Query
// ('Q', as COMMIT is sent) or a pipeline with a Parse ('P') of such a
// statement.
func PostgresStatement(prefix string) func([]byte) bool {
	want := bytes.ToUpper([]byte(prefix))
	return func(req []byte) bool {
		for len(req) > 0 && req[0] != 0 {
			n := pgMessage(req)
			if n == 0 {
				return false
			}
			typ, body := req[0], req[5:n]
			req = req[n:]
			switch typ {
			case 'Q':
			case 'P':
				// The statement's name, then its text.
				i := bytes.IndexByte(body, 0)
				if i < 0 {
					continue
				}
				body = body[i+1:]
			default:
				continue
			}
			if bytes.HasPrefix(bytes.ToUpper(bytes.TrimSpace(body)), want) {
				return true
			}
		}
		return false
	}
}
