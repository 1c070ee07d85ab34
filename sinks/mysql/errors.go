package mysql

import (
	"context"
	"errors"

	"github.com/go-sql-driver/mysql"
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

// transientCodes are server errors that go away by themselves.
var transientCodes = map[uint16]bool{
	1021: true, // disk full
	1037: true, // out of memory
	1038: true, // out of sort memory
	1040: true, // too many connections
	1041: true, // out of memory
	1047: true, // unknown command / WSREP not ready (Galera)
	1053: true, // server shutdown in progress
	1114: true, // table is full
	1158: true, // network read error
	1159: true, // network read timeout
	1160: true, // network write error
	1161: true, // network write timeout
	1180: true, // error during COMMIT
	1181: true, // error during ROLLBACK
	1205: true, // lock wait timeout
	1213: true, // deadlock
	1290: true, // --read-only (a replica during failover)
	1317: true, // query interrupted
	1615: true, // prepared statement needs re-preparing
	1792: true, // read-only transaction
	1836: true, // read-only mode
	1927: true, // connection killed (MariaDB)
	1969: true, // statement timeout (MariaDB)
	2006: true, // server has gone away
	2013: true, // lost connection during query
	3024: true, // max_execution_time exceeded (MySQL)
	4031: true, // disconnected for inactivity (MySQL)
}

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
		case transientCodes[me.Number]:
			return transient
		case rowCodes[me.Number]:
			return rowLevel
		}
		return fatal
	case errors.Is(err, mysql.ErrPktTooLarge):
		return rowLevel
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fatal
	}
	return transient
}
