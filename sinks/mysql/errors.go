package mysql

import (
	"context"
	"errors"

	"github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/mysqlconn"
)

// class says what to do about a failed statement.
type class uint8

const (
	// transient: roll back and retry the whole batch after a backoff
	// (lost connection, deadlock, server restarting or read-only during a
	// failover).
	transient class = iota
	// rowLevel: some row's data is refused for good (too long, NULL in a
	// NOT NULL column, foreign key); find the rows and reject them.
	rowLevel
	// fatal: retrying cannot help and no row is to blame (no such table,
	// access denied, syntax); stop the pipeline, dropping nothing.
	fatal
)

// rowCodes are errors about the data of a row.
var rowCodes = map[uint16]bool{
	1048: true, // column cannot be null
	1062: true, // duplicate entry (another unique index, or append into a keyed table)
	1153: true, // packet bigger than max_allowed_packet (one huge row)
	1216: true, // foreign key: no parent row (old code)
	1217: true, // foreign key: row is referenced (old code)
	1263: true, // NULL into a NOT NULL column of a multi-row insert
	1264: true, // out of range
	1265: true, // data truncated
	1292: true, // incorrect date/time value
	1301: true, // result larger than max_allowed_packet
	1366: true, // incorrect value for column (string into int, bad UTF-8)
	1367: true, // illegal value
	1406: true, // data too long
	1411: true, // incorrect value for function
	1451: true, // foreign key: row is referenced
	1452: true, // foreign key: no parent row
	1690: true, // value out of range
	3140: true, // invalid JSON
	3819: true, // check constraint violated (MySQL)
	4025: true, // check constraint failed (MariaDB)
}

// classify sorts err. Errors that are not the server's (network errors,
// the driver's invalid-connection errors) are transient: the connection
// is what failed, not the statement.
func classify(err error) class {
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me):
		switch {
		case mysqlconn.TransientCodes[me.Number]:
			return transient
		case rowCodes[me.Number]:
			return rowLevel
		}
		return fatal
	case errors.Is(err, mysql.ErrPktTooLarge):
		return rowLevel
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, errTakenOver):
		return fatal
	}
	return transient
}
