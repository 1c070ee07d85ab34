package kafka

import "github.com/etld/etld/internal/testenv"

// The shared helpers of internal/testenv, under the names this package's
// tests call them by.
var (
	createTopic = testenv.KafkaTopic
	deleteAtEnd = testenv.DeleteTopicAtEnd
	readTopic   = testenv.ReadTopic
)
