package layout

import (
	"reflect"
	"testing"
)

func TestParseRejectsWrongSize(t *testing.T) {
	m := New(3)
	for i := range m.Containers {
		m.Containers[i] = Owner{Node: "a", Epoch: 1}
	}
	if _, err := Parse(m.Encode(), 4); err == nil {
		t.Fatal("a 3-container map parsed for 4 containers")
	}
	got, err := Parse(m.Encode(), 3)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip: %v %v", got, err)
	}
}
