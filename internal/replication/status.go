package replication

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// ReplicaInfo is one replication connection of a node, as status shows it.
type ReplicaInfo struct {
	Channel       string `json:"channel"` // "" for a primary cluster's own replication
	Source        string `json:"source"`  // node name
	SourceAddress string `json:"source_address"`
	IO            string `json:"io_thread"`  // Yes | Connecting | No
	SQL           string `json:"sql_thread"` // Yes | No
	// LagSeconds is measured with the heartbeat the keeper writes on the
	// source every 0.5 s (how old the replica's copy is); nil when unknown.
	LagSeconds *float64 `json:"lag_seconds"`
	// SecondsBehindMaster is the server's own estimate, for comparison.
	SecondsBehindMaster *int   `json:"seconds_behind_master"`
	GTIDSlavePos        string `json:"gtid_slave_pos"`
	GTIDIOPos           string `json:"gtid_io_pos"`
	SemiSync            bool   `json:"semi_sync"` // this replica acknowledges (rpl_semi_sync_slave_status)
	LastError           string `json:"last_error,omitempty"`
	// IOState is what the IO thread does (Slave_IO_State: "Waiting for
	// master to send event", "Registering slave on master", …).
	IOState string `json:"io_state,omitempty"`
}

// HeartbeatTable holds one row per source cluster, rewritten by the keeper
// on the cluster's writer; a replica's lag is how old its copy of the row is.
const HeartbeatTable = "hd_meta.heartbeat"

// Detail is a running server's replication state, as status shows it.
type Detail struct {
	GTIDBinlogPos string        `json:"gtid_binlog_pos,omitempty"`
	ReadOnly      *bool         `json:"read_only,omitempty"`
	Replication   []ReplicaInfo `json:"replication,omitempty"`
	SemiSync      *SemiSyncInfo `json:"semi_sync,omitempty"`
	// Role is what the server does now in a primary cluster: primary, or
	// replica when it replicates from its own cluster ("" otherwise).
	Role plan.Role `json:"-"`
}

// SemiSyncInfo is a primary's semi-synchronous state.
type SemiSyncInfo struct {
	Enabled bool   `json:"enabled"`
	Status  string `json:"status"`  // ON: commits wait for an acknowledgement; OFF: fell back to async
	Clients int    `json:"clients"` // semi-sync replicas connected
	AckedTx int64  `json:"acked_tx"`
	AsyncTx int64  `json:"async_tx"` // commits not acknowledged in time
}

// Detail reads a running node's replication state.
func (m *Manager) Detail(ctx context.Context, n *plan.Node) Detail {
	var info Detail
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	db := m.Servers.Admin(n)
	defer db.Close()
	v, err := mariadb.Vars(ctx, db, "gtid_binlog_pos", "read_only", "rpl_semi_sync_master_enabled")
	if err != nil {
		return info
	}
	info.GTIDBinlogPos = v["gtid_binlog_pos"]
	ro := v["read_only"] == "1"
	info.ReadOnly = &ro
	chans, err := mariadb.Replicas(ctx, db)
	if err != nil {
		return info
	}
	st, _ := mariadb.Status(ctx, db, "rpl_semi_sync_%")
	for _, row := range chans {
		c := Channel(row)
		r := ReplicaInfo{Channel: c["connection_name"], SourceAddress: c["master_host"], Source: m.nodeAt(c["master_host"]),
			IO: c["slave_io_running"], SQL: c["slave_sql_running"], GTIDSlavePos: c["gtid_slave_pos"], GTIDIOPos: c["gtid_io_pos"],
			SemiSync: st["rpl_semi_sync_slave_status"] == "ON", LastError: c.LastError(), IOState: c["slave_io_state"]}
		if s, err := strconv.Atoi(c["seconds_behind_master"]); err == nil {
			r.SecondsBehindMaster = &s
		}
		r.LagSeconds = m.heartbeatLag(ctx, db, m.sourceCluster(n, r.Channel))
		info.Replication = append(info.Replication, r)
	}
	if v["rpl_semi_sync_master_enabled"] == "1" {
		ss := &SemiSyncInfo{Enabled: true, Status: st["rpl_semi_sync_master_status"]}
		ss.Clients, _ = strconv.Atoi(st["rpl_semi_sync_master_clients"])
		ss.AckedTx, _ = strconv.ParseInt(st["rpl_semi_sync_master_yes_tx"], 10, 64)
		ss.AsyncTx, _ = strconv.ParseInt(st["rpl_semi_sync_master_no_tx"], 10, 64)
		info.SemiSync = ss
	}
	if n.Kind == spec.KindPrimary {
		info.Role = plan.RolePrimary
		for _, r := range info.Replication {
			if r.Channel == "" {
				info.Role = plan.RoleReplica
			}
		}
	}
	return info
}

// sourceCluster is the cluster a node's replication connection reads.
func (m *Manager) sourceCluster(n *plan.Node, channel string) string {
	if channel == "" {
		return n.Cluster
	}
	for _, ch := range m.Plan.Channels {
		if ch.Name == channel && ch.Receiver == n.Name {
			return ch.From
		}
	}
	return ""
}

// heartbeatLag is how old the node's copy of a cluster's heartbeat is, by
// this machine's clock (the keeper's, which wrote it): the servers' own
// clocks play no part.
func (m *Manager) heartbeatLag(ctx context.Context, db *sql.DB, cluster string) *float64 {
	hb, err := m.heartbeat(ctx, db, cluster)
	if err != nil || hb.IsZero() {
		return nil
	}
	lag := max(time.Since(hb), 0).Seconds()
	return &lag
}
