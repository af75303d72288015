// Package teamtest holds the team-scale acceptance test (issue 16,
// docs/team.md): three `switchboard serve --http` replicas of the real
// binary, sharing one configuration and one PostgreSQL store, behind a
// real nginx, under a go-sdk load generator of 50 clients. Its test,
// TestThreeReplicas, prints the figures that docs/team.md quotes.
//
// The package has no code outside its tests.
package teamtest
