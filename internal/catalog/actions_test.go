package catalog

import (
	"testing"
)

func TestQueryActions(t *testing.T) {
	for _, tc := range []struct {
		query   string
		primary action
		also    []action
	}{
		{"remember that Alice works at Acme", actCreate, nil},
		{"how do I save a note about a person so I remember it later", actCreate, nil},
		{"forget everything you know about Bob", actDelete, nil},
		{"get rid of the old entry for Dave", actDelete, nil}, // the phrase, not "get"
		{"what do you remember about Alice?", actRead, nil},   // a question asks to know
		{"how has the share price moved this year", actRead, nil},
		{"can you delete the draft", actDelete, nil}, // a request phrased as a question
		{"rename report.txt to final.txt", actUpdate, nil},
		{"look up the weather in Oslo", actSearch, nil},
		{"read config.json, change the port and save it", actRead, []action{actUpdate, actCreate}},
		{"add two numbers", actNone, nil}, // arithmetic creates nothing
		{"add 3 and 4", actNone, nil},
		{"add a comment to the issue", actCreate, nil},
		{"weather in Paris", actNone, nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			q := understand(tc.query)
			if q.action != tc.primary {
				t.Errorf("primary action = %q, want %q", q.action, tc.primary)
			}
			for _, a := range tc.also {
				if q.actions&(1<<a) == 0 {
					t.Errorf("actions %b lack %q", q.actions, a)
				}
			}
		})
	}
}

func TestToolAction(t *testing.T) {
	for _, tc := range []struct {
		name, description, annotations string
		want                           toolAct
	}{
		{"delete_entities", "Delete multiple entities", `{"destructiveHint":true,"idempotentHint":true}`, toolAct{act: actDelete, destructive: true}},
		{"create_entities", "Create multiple new entities", `{"destructiveHint":false,"readOnlyHint":false}`, toolAct{act: actCreate}},
		{"add_observations", "Add new observations", "", toolAct{act: actCreate}},
		{"get-sum", "Returns the sum of two numbers", `{"readOnlyHint":true}`, toolAct{act: actRead, readOnly: true}},
		{"issueRemove", "", "", toolAct{act: actDelete}},
		{"entities", "Deletes entities from the graph.", "", toolAct{act: actDelete}}, // the description's first word
		{"echo", "Echoes back the input", `{"readOnlyHint":true}`, toolAct{act: actRead, readOnly: true}},
		{"gzip-file-as-resource", "Compresses a single file", `{"readOnlyHint":false}`, toolAct{}},
		{"move_file", "Move or rename files", `{"destructiveHint":true}`, toolAct{act: actUpdate, destructive: true}},
		{"search_nodes", "Search for nodes", "", toolAct{act: actSearch}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := toolAction(tc.name, tc.description, tc.annotations); got != tc.want {
				t.Errorf("toolAction = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPolarity(t *testing.T) {
	del := toolAct{act: actDelete, destructive: true}
	add := toolAct{act: actCreate}
	ro := toolAct{act: actRead, readOnly: true}
	for _, tc := range []struct {
		name    string
		primary action
		all     uint8
		long    bool
		tool    toolAct
		want    float64
	}{
		{"create vs delete", actCreate, 1 << actCreate, false, del, factorOpposite},
		{"create vs create", actCreate, 1 << actCreate, false, add, factorPrimary},
		{"long create vs create", actCreate, 1 << actCreate, true, add, factorNamed},
		{"delete named too", actCreate, 1<<actCreate | 1<<actDelete, false, del, factorNamed},
		{"delete vs read-only", actDelete, 1 << actDelete, false, ro, factorWrongPower},
		{"no action", actNone, 0, false, del, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := polarity(tc.primary, tc.all, tc.long, tc.tool); got != tc.want {
				t.Errorf("polarity = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestServerTopics: a terse tool inherits the words its server's other
// tools share, and its server's name; a server of two tools has no topic.
func TestServerTopics(t *testing.T) {
	docs := []toolDoc{
		{Server: "kg", Name: "add_facts", Description: "Add facts to people in the knowledge graph"},
		{Server: "kg", Name: "drop_facts", Description: "Drop facts from the knowledge graph"},
		{Server: "kg", Name: "read_all", Description: "Read everything."},
		{Server: "pair", Name: "one", Description: "first tool"},
		{Server: "pair", Name: "two", Description: "second tool"},
	}
	ix := buildIndex(1, docs)
	var topic []string
	for _, p := range ix.postings["graph"] {
		if ix.docs[p.doc].name == "read_all" {
			topic = append(topic, "graph")
		}
	}
	if len(topic) == 0 {
		t.Errorf("read_all lacks its server's topic word %q", "graph")
	}
	// 1 of the pair's 2 tools says "second": shared enough, but a pair
	// is too few to have a topic.
	if n := len(ix.postings["second"]); n != 1 {
		t.Errorf("%q is in %d documents, want 1", "second", n)
	}
}
