package consistency

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/hderr"
)

const bankHistory = `{"index":0,"time":0,"process":0,"type":"ok","f":"init","value":{"0":10,"1":10}}
{"index":1,"time":1,"process":0,"type":"invoke","f":"transfer","value":{"from":0,"to":1,"amount":3}}
{"index":2,"time":2,"process":1,"type":"invoke","f":"read","value":null}
{"index":3,"time":3,"process":0,"type":"ok","f":"transfer","node":"db1","value":{"from":0,"to":1,"amount":3}}
{"index":4,"time":4,"process":1,"type":"ok","f":"read","node":"db2","value":{"0":7,"1":13}}
{"index":5,"time":5,"process":0,"type":"invoke","f":"transfer","value":{"from":1,"to":0,"amount":20}}
{"index":6,"time":6,"process":0,"type":"fail","f":"transfer","value":{"from":1,"to":0,"amount":20}}
{"index":7,"time":7,"process":2,"type":"invoke","f":"transfer","value":{"from":1,"to":0,"amount":1}}
{"index":8,"time":8,"process":2,"type":"info","f":"transfer","error":2013,"value":{"from":1,"to":0,"amount":1}}
`

func TestBank(t *testing.T) {
	for _, c := range []struct {
		name, extra string
		valid       bool
		anomalies   string
	}{
		{"money kept: valid", `{"index":9,"time":9,"process":3,"type":"invoke","f":"read","value":null}
{"index":10,"time":10,"process":3,"type":"ok","f":"read","node":"db3","value":{"0":8,"1":12}}`, true, ""},
		{"a lost update makes money", `{"index":9,"time":9,"process":3,"type":"invoke","f":"read","value":null}
{"index":10,"time":10,"process":3,"type":"ok","f":"read","node":"db3","value":{"0":10,"1":13}}`, false, "wrong-total"},
		{"an overdraft", `{"index":9,"time":9,"process":3,"type":"invoke","f":"read","value":null}
{"index":10,"time":10,"process":3,"type":"ok","f":"read","node":"db3","value":{"0":-1,"1":21}}`, false, "negative-value"},
		{"a read that misses an account and sees one never opened", `{"index":9,"time":9,"process":3,"type":"invoke","f":"read","value":null}
{"index":10,"time":10,"process":3,"type":"ok","f":"read","node":"db3","value":{"0":8,"7":12}}`, false, "unexpected-accounts"},
		{"a read that failed is not judged", `{"index":9,"time":9,"process":3,"type":"invoke","f":"read","value":null}
{"index":10,"time":10,"process":3,"type":"fail","f":"read","error":1213,"value":null}`, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ops, err := Read(strings.NewReader(bankHistory+c.extra+"\n"), all...)
			if err != nil {
				t.Fatal(err)
			}
			for _, model := range Models { // forbidden under every model
				r, err := Check(context.Background(), ops, model)
				if err != nil {
					t.Fatal(err)
				}
				var types []string
				for _, a := range r.Anomalies {
					types = append(types, a.Type)
				}
				if r.Valid != c.valid || strings.Join(types, ",") != c.anomalies {
					t.Errorf("%s: valid %v, anomalies %v", model, r.Valid, types)
				}
				if r.OK+r.Fail != 4 || r.Info != 1 {
					t.Errorf("counts: %+v", r)
				}
			}
		})
	}
	ops, _ := Read(strings.NewReader(bankHistory+`{"index":9,"time":9,"process":3,"type":"invoke","f":"read","value":null}
{"index":10,"time":10,"process":3,"type":"ok","f":"read","node":"db3","value":{"0":10,"1":13}}`+"\n"), all...)
	r, _ := Check(context.Background(), ops, "read-committed")
	if ex := r.Anomalies[0].Example; !strings.Contains(ex, "the read at index 10 (process 3, through db3) saw 2 accounts holding 23 in all, where 2 accounts opened with 20: 3 made by the transfers") {
		t.Errorf("example: %s", ex)
	}
	// written and read back the same
	var b bytes.Buffer
	if err := Write(&b, ops); err != nil {
		t.Fatal(err)
	}
	back, err := Read(&b, all...)
	if err != nil || len(back) != len(ops) || bankOf(back[3]).Amount != 3 || bankOf(back[4]).Balances[1] != 13 || bankOf(back[2]).Balances != nil {
		t.Errorf("round trip: %v %+v", err, back)
	}
}

func TestBadBankHistories(t *testing.T) {
	for _, c := range []struct{ name, history, want string }{
		{"no opening balances", `{"index":1,"time":1,"process":0,"type":"invoke","f":"read","value":null}`, "needs its opening balances"},
		{"mixed workloads", strings.SplitN(bankHistory, "\n", 2)[0] + "\n" + `{"index":1,"time":1,"process":0,"type":"invoke","f":"txn","value":[["r",1,null]]}`, `"txn" in a history of "init" operations`},
		{"a transfer without its amount", `{"index":1,"time":1,"process":0,"type":"invoke","f":"transfer","value":{"from":0,"to":1}}`, `expected {"from": ACCOUNT, "to": ACCOUNT, "amount": N}`},
		{"accounts by name", `{"index":0,"time":0,"process":0,"type":"ok","f":"init","value":{"alice":10}}`, "expected integer accounts"},
		{"an unknown function", `{"index":0,"time":0,"process":0,"type":"ok","f":"deposit","value":null}`, "expected txn (list-append), transfer, read and init (bank), add and read-set (set) or incr and read-counter (counter), got \"deposit\""},
		// the review's L1: two histories in one file, reads without
		// balances, transfers that cannot be, balances past 64 bits' sums
		{"two inits", bankHistory + strings.SplitN(bankHistory, "\n", 2)[0], "a second init (the first at index 0)"},
		{"an ok read of null", strings.SplitN(bankHistory, "\n", 2)[0] + "\n" + `{"index":1,"time":1,"process":0,"type":"invoke","f":"read","value":null}
{"index":2,"time":2,"process":0,"type":"ok","f":"read","value":null}`, "expected the balances by account"},
		{"a null balance", `{"index":0,"time":0,"process":0,"type":"ok","f":"init","value":{"0":null}}`, "account 0: expected a balance, got null"},
		{"a huge balance", `{"index":0,"time":0,"process":0,"type":"ok","f":"init","value":{"0":9223372036854775807}}`, "beyond the"},
		{"a transfer to itself", `{"index":1,"time":1,"process":0,"type":"invoke","f":"transfer","value":{"from":7,"to":7,"amount":5}}`, "from account 7 to itself"},
		{"a negative transfer", `{"index":1,"time":1,"process":0,"type":"invoke","f":"transfer","value":{"from":0,"to":1,"amount":-50}}`, "amount: expected a positive amount, got -50"},
		{"a transfer with an account never opened", strings.SplitN(bankHistory, "\n", 2)[0] + "\n" + `{"index":1,"time":1,"process":0,"type":"invoke","f":"transfer","value":{"from":0,"to":9,"amount":1}}`, "account 9, which never opened"},
		{"a read completed as a transfer", strings.SplitN(bankHistory, "\n", 2)[0] + "\n" + `{"index":1,"time":1,"process":0,"type":"invoke","f":"read","value":null}
{"index":2,"time":2,"process":0,"type":"ok","f":"transfer","value":{"from":0,"to":1,"amount":1}}`, `completes "transfer", but index 1 invoked "read"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ops, err := Read(strings.NewReader(c.history+"\n"), all...)
			if err == nil {
				_, err = Check(context.Background(), ops, "serializable")
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestLongListsInExamples(t *testing.T) {
	long := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	if got := short(long); got != "[1 2 3 … 11 12 13 14 15] (15 values)" {
		t.Errorf("short: %s", got)
	}
	if got := short(long[:6]); got != "[1 2 3 4 5 6]" {
		t.Errorf("short of a short list: %s", got)
	}
	other := append(append([]int{}, long[:8]...), 10, 9, 11)
	if got := apart(long, other); got != "[… 7 8 9 10 11 …] (15 values; from the 7th)" {
		t.Errorf("apart: %s", got)
	}
	if got := apart(other, long); got != "[… 7 8 10 9 11] (11 values; from the 7th)" {
		t.Errorf("apart, the other way: %s", got)
	}
}

// TestCheckOneWorkload: a history whose operations belong to two
// workloads is refused, naming the first that does not belong, whatever
// workload comes first (the checker is not chosen by the first alone).
func TestCheckOneWorkload(t *testing.T) {
	bank := Op{Index: 0, Type: "ok", F: FInit, Data: &Bank{Balances: map[int]int{0: 100, 1: 100}}}
	txn := Op{Index: 1, Type: "invoke", F: FTxn, Value: []Mop{{F: "append", Key: 1, Value: 1}}}
	add := Op{Index: 2, Type: "invoke", F: FAdd, Data: &SetOp{Set: 1, Elements: []int{1}}}
	for _, ops := range [][]Op{{bank, txn}, {txn, add}, {add, bank}} {
		_, err := Check(context.Background(), ops, "serializable")
		want := fmt.Sprintf("index %d: f: %q in a history of %q operations", ops[1].Index, ops[1].F, ops[0].F)
		if err == nil || !strings.Contains(err.Error(), want) || !hderr.IsUser(err) {
			t.Errorf("%s then %s: %v, want a user error with %q", ops[0].F, ops[1].F, err, want)
		}
	}
	// an operation without a payload is list-append's
	if _, err := Check(context.Background(), []Op{{Type: "invoke", F: "foo"}}, "serializable"); err == nil || !strings.Contains(err.Error(), `f: expected txn (list-append), got "foo"`) {
		t.Errorf("a history of no workload's operations: %v", err)
	}
	// a history is read as the families its reader names, and a function
	// of none of them refused naming theirs
	line := `{"time": 1, "process": 0, "type": "invoke", "f": "add", "value": [0, 1]}` + "\n"
	if _, err := Read(strings.NewReader(line), all...); err != nil {
		t.Errorf("an add read as every family: %v", err)
	}
	for _, c := range []struct {
		fams []Family
		want string
	}{
		{[]Family{ListAppendOps}, `line 1: f: expected txn (list-append), got "add"`},
		{[]Family{ListAppendOps, BankOps}, `line 1: f: expected txn (list-append) or transfer, read and init (bank), got "add"`},
		{nil, `a history read as no workload's operations`},
	} {
		if _, err := Read(strings.NewReader(line), c.fams...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("an add read as %d families: %v, want %q", len(c.fams), err, c.want)
		}
	}
}

// TestReadOnly: which operations only read, whatever their workload.
func TestReadOnly(t *testing.T) {
	for _, c := range []struct {
		op   Op
		want bool
	}{
		{Op{F: FTxn, Value: []Mop{{F: "r", Key: 1}, {F: "r", Key: 2}}}, true},
		{Op{F: FTxn, Value: []Mop{{F: "r", Key: 1}, {F: "append", Key: 2, Value: 1}}}, false},
		{Op{F: FTxn}, false},
		{Op{F: FRead, Data: &Bank{}}, true},
		{Op{F: FTransfer, Data: &Bank{From: 0, To: 1, Amount: 1}}, false},
		{Op{F: FReadSet, Data: &SetOp{Set: 1}}, true},
		{Op{F: FAdd, Data: &SetOp{Set: 1, Elements: []int{3}}}, false},
	} {
		if got := ReadOnly(c.op); got != c.want {
			t.Errorf("%s %+v: read-only %v, want %v", c.op.F, c.op, got, c.want)
		}
	}
}
