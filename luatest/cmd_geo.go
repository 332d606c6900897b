// Commands from https://redis.io/commands/?group=geo

package luatest

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var geoCommands = []*command{
	{name: "geoadd", fn: cmdGeoadd},
	{name: "geopos", fn: cmdGeopos},
	{name: "geodist", fn: cmdGeodist},
	{name: "geohash", fn: cmdGeohash},
	{name: "geosearch", fn: cmdGeosearch},
	{name: "geosearchstore", fn: cmdGeosearch},
	{name: "georadius", fn: cmdGeosearch},
	{name: "georadius_ro", fn: cmdGeosearch},
	{name: "georadiusbymember", fn: cmdGeosearch},
	{name: "georadiusbymember_ro", fn: cmdGeosearch},
}

// The geohash constants of geohash.c and geohash_helper.c.
const (
	geoLatMin    = -85.05112878
	geoLatMax    = 85.05112878
	geoLonMin    = -180.0
	geoLonMax    = 180.0
	geoStep      = 26
	earthRadiusM = 6372797.560856
)

func interleave64(x, y uint32) uint64 {
	var out uint64
	for i := 0; i < 32; i++ {
		out |= uint64(x>>i&1) << (2 * i)
		out |= uint64(y>>i&1) << (2*i + 1)
	}
	return out
}

func deinterleave64(v uint64) (x, y uint32) {
	for i := 0; i < 32; i++ {
		x |= uint32(v>>(2*i)&1) << i
		y |= uint32(v>>(2*i+1)&1) << i
	}
	return x, y
}

// geoEncode is geohashEncode with the given latitude range (the keyspace
// uses ±85.05112878, GEOHASH's standard strings ±90).
func geoEncode(lon, lat, latMin, latMax float64) uint64 {
	latOff := float64((lat - latMin) / (latMax - latMin))
	lonOff := float64((lon - geoLonMin) / (geoLonMax - geoLonMin))
	latOff = float64(latOff * float64(uint64(1)<<geoStep))
	lonOff = float64(lonOff * float64(uint64(1)<<geoStep))
	return interleave64(uint32(latOff), uint32(lonOff))
}

// geoDecode is geohashDecodeToLongLatWGS84: the centre of the cell, clamped.
func geoDecode(bits uint64) (lon, lat float64) {
	ilat, ilon := deinterleave64(bits)
	latScale, lonScale := geoLatMax-geoLatMin, geoLonMax-geoLonMin
	step := float64(uint64(1) << geoStep)
	latMinA := geoLatMin + float64(float64(float64(ilat)*1.0)/step)*latScale
	latMaxA := geoLatMin + float64(float64(float64(ilat+1)*1.0)/step)*latScale
	lonMinA := geoLonMin + float64(float64(float64(ilon)*1.0)/step)*lonScale
	lonMaxA := geoLonMin + float64(float64(float64(ilon+1)*1.0)/step)*lonScale
	lon = min(max((lonMinA+lonMaxA)/2, geoLonMin), geoLonMax)
	lat = min(max((latMinA+latMaxA)/2, geoLatMin), geoLatMax)
	return lon, lat
}

func degRad(d float64) float64 { return d * (math.Pi / 180.0) }

// geoDistance is geohashGetDistance (haversine on Redis' Earth radius).
func geoDistance(lon1, lat1, lon2, lat2 float64) float64 {
	v := math.Sin((degRad(lon2) - degRad(lon1)) / 2)
	if v == 0 {
		return earthRadiusM * math.Abs(degRad(lat2)-degRad(lat1))
	}
	lat1r, lat2r := degRad(lat1), degRad(lat2)
	u := math.Sin((lat2r - lat1r) / 2)
	a := u*u + math.Cos(lat1r)*math.Cos(lat2r)*v*v
	return 2.0 * earthRadiusM * math.Asin(math.Sqrt(a))
}

// geoCoord formats a coordinate as addReplyHumanLongDouble does.
func geoCoord(f float64) resp.Reply {
	return resp.BulkReply(formatLongDouble(new(big.Float).SetPrec(64).SetFloat64(f)))
}

func geoUnit(s string) (float64, bool) {
	switch strings.ToLower(s) {
	case "m":
		return 1, true
	case "km":
		return 1000, true
	case "ft":
		return 0.3048, true
	case "mi":
		return 1609.34, true
	}
	return 0, false
}

var errGeoUnit = resp.ErrorReply("ERR unsupported unit provided. please use M, KM, FT, MI")

// parseLonLat is extractLongLatOrReply.
func parseLonLat(lonS, latS string) (float64, float64, *resp.Reply) {
	lon, ok1 := parseFloat(lonS)
	lat, ok2 := parseFloat(latS)
	if !ok1 || !ok2 {
		return 0, 0, &errNotFloat
	}
	if lon < geoLonMin || lon > geoLonMax || lat < geoLatMin || lat > geoLatMax {
		return 0, 0, errReply(fmt.Sprintf("ERR invalid longitude,latitude pair %s,%s", formatCF(lon), formatCF(lat)))
	}
	return lon, lat, nil
}

// formatCF is C's printf("%f"), which writes the infinities "inf" and
// "-inf" (Go's %f writes "+Inf" and "-Inf").
func formatCF(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return fmt.Sprintf("%f", f)
}

// GEOADD key [NX | XX] [CH] longitude latitude member [...] —
// https://redis.io/commands/geoadd/ (a ZADD of 52-bit geohash scores).
func cmdGeoadd(c *cmdCtx, args []string) resp.Reply {
	i := 1
	var flags []string
	nx, xx := false, false
	for ; i < len(args); i++ {
		switch opt := strings.ToUpper(args[i]); opt {
		case "NX", "XX", "CH":
			nx, xx = nx || opt == "NX", xx || opt == "XX"
			flags = append(flags, opt)
			continue
		}
		break
	}
	rest := args[i:]
	if len(rest)%3 != 0 || len(rest) == 0 || nx && xx {
		return errSyntax
	}
	zargs := append([]string{args[0]}, flags...)
	for j := 0; j < len(rest); j += 3 {
		lon, lat, bad := parseLonLat(rest[j], rest[j+1])
		if bad != nil {
			return *bad
		}
		zargs = append(zargs, strconv.FormatUint(geoEncode(lon, lat, geoLatMin, geoLatMax), 10), rest[j+2])
	}
	return cmdZadd(&cmdCtx{r: c.r, proto: c.proto, name: "zadd", run: c.run}, zargs)
}

// GEOPOS key [member ...] — https://redis.io/commands/geopos/
func cmdGeopos(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	out := make([]resp.Reply, 0, len(args)-1)
	for _, m := range args[1:] {
		s, ok := 0.0, false
		if e != nil {
			s, ok = e.zset.scores[m]
		}
		if !ok {
			out = append(out, nullArray)
			continue
		}
		lon, lat := geoDecode(uint64(s))
		out = append(out, resp.ArrayReply(geoCoord(lon), geoCoord(lat)))
	}
	return resp.ArrayReply(out...)
}

// GEODIST key member1 member2 [M | KM | FT | MI] — https://redis.io/commands/geodist/
func cmdGeodist(c *cmdCtx, args []string) resp.Reply {
	toM := 1.0
	if len(args) == 4 {
		u, ok := geoUnit(args[3])
		if !ok {
			return errGeoUnit
		}
		toM = u
	} else if len(args) > 4 {
		return errSyntax
	}
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.NilReply
	}
	s1, ok1 := e.zset.scores[args[1]]
	s2, ok2 := e.zset.scores[args[2]]
	if !ok1 || !ok2 {
		return resp.NilReply
	}
	lon1, lat1 := geoDecode(uint64(s1))
	lon2, lat2 := geoDecode(uint64(s2))
	return resp.BulkReply(fmt.Sprintf("%.4f", geoDistance(lon1, lat1, lon2, lat2)/toM))
}

// GEOHASH key [member ...] — https://redis.io/commands/geohash/ (11
// characters of the standard geohash, re-encoded with latitudes ±90).
func cmdGeohash(c *cmdCtx, args []string) resp.Reply {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	out := make([]resp.Reply, 0, len(args)-1)
	for _, m := range args[1:] {
		s, ok := 0.0, false
		if e != nil {
			s, ok = e.zset.scores[m]
		}
		if !ok {
			out = append(out, resp.NilReply)
			continue
		}
		lon, lat := geoDecode(uint64(s))
		bits := geoEncode(lon, lat, -90, 90)
		buf := make([]byte, 11)
		for i := range buf {
			idx := 0
			if i < 10 {
				idx = int(bits>>(52-(i+1)*5)) & 0x1f
			}
			buf[i] = alphabet[idx]
		}
		out = append(out, resp.BulkReply(string(buf)))
	}
	return resp.ArrayReply(out...)
}

type geoPoint struct {
	member   string
	score    float64
	lon, lat float64
	dist     float64 // meters
}

// geoSearch is what georadiusGeneric parses: the center, the shape in meters
// (a radius, or a box when byBox), the unit's size in meters, and what the
// reply or the stored zset holds.
type geoSearch struct {
	x, y                          float64
	radius, width, height, toM    float64
	byBox                         bool
	withDist, withHash, withCoord bool
	sortDir                       int // 1 ASC, -1 DESC, 0 neither
	count                         int64
	storeKey                      string
	storeDist                     bool
}

// GEOSEARCH key FROMMEMBER member | FROMLONLAT lon lat BYRADIUS radius unit
// | BYBOX width height unit [ASC | DESC] [COUNT count [ANY]] [WITHCOORD]
// [WITHDIST] [WITHHASH] — https://redis.io/commands/geosearch/, and
// GEOSEARCHSTORE, GEORADIUS(_RO), GEORADIUSBYMEMBER(_RO)
// (georadiusGeneric). Results without ASC or DESC come back nearest first;
// the server answers them in geohash-cell order.
func cmdGeosearch(c *cmdCtx, args []string) resp.Reply {
	src := 0
	if c.name == "geosearchstore" {
		src = 1
	}
	e, wrong := c.zset(args[src])
	if wrong {
		return errWrongType
	}
	o, bad := c.parseGeosearchArgs(args, src, e)
	if bad != nil {
		return *bad
	}
	if e == nil {
		if o.storeKey != "" {
			delete(c.r.db, o.storeKey)
			return resp.IntReply(0)
		}
		return resp.ArrayReply()
	}
	pts := geoSearchPoints(e.zset, &o)
	if o.storeKey != "" {
		z := newZSet()
		for _, p := range pts {
			if o.storeDist {
				z.set(p.member, p.dist/o.toM)
			} else {
				z.set(p.member, p.score)
			}
		}
		return resp.IntReply(int64(c.storeZSet(o.storeKey, z)))
	}
	return geoSearchReply(pts, &o)
}

// parseGeosearchArgs parses the arguments after the source key (args[src],
// whose zset is e), in georadiusGeneric's order: GEORADIUS's center and
// radius, GEORADIUSBYMEMBER's member and radius, then the options, then the
// checks of how they combine.
func (c *cmdCtx) parseGeosearchArgs(args []string, src int, e *entry) (geoSearch, *resp.Reply) {
	search := strings.HasPrefix(c.name, "geosearch")
	storeCmd := c.name == "geosearchstore"
	noStore := strings.HasSuffix(c.name, "_ro")
	var o geoSearch
	if storeCmd {
		o.storeKey = args[0]
	}
	base := src + 1
	if !search {
		var bad *resp.Reply
		if base, bad = c.parseGeoradiusCenter(args, e, &o); bad != nil {
			return o, bad
		}
	}
	any := false
	fromMember, fromLoc, byRadius := false, false, false
	for i := base; i < len(args); i++ {
		left := len(args) - i - 1
		switch opt := strings.ToUpper(args[i]); {
		case opt == "WITHDIST":
			o.withDist = true
		case opt == "WITHHASH":
			o.withHash = true
		case opt == "WITHCOORD":
			o.withCoord = true
		case opt == "ANY":
			any = true
		case opt == "ASC":
			o.sortDir = 1
		case opt == "DESC":
			o.sortDir = -1
		case opt == "COUNT" && left >= 1:
			n, ok := parseInt(args[i+1])
			if !ok {
				return o, &errNotInt
			}
			if n <= 0 {
				return o, errReply("ERR COUNT must be > 0")
			}
			o.count = n
			i++
		case (opt == "STORE" || opt == "STOREDIST") && left >= 1 && !noStore && !search:
			o.storeKey, o.storeDist = args[i+1], opt == "STOREDIST"
			i++
		case opt == "STOREDIST" && storeCmd:
			o.storeDist = true
		case opt == "FROMMEMBER" && left >= 1 && search && !fromLoc:
			fromMember = true
			if e != nil {
				s, ok := e.zset.scores[args[i+1]]
				if !ok {
					return o, errReply("ERR could not decode requested zset member")
				}
				o.x, o.y = geoDecode(uint64(s))
			}
			i++
		case opt == "FROMLONLAT" && left >= 2 && search && !fromMember:
			lon, lat, bad := parseLonLat(args[i+1], args[i+2])
			if bad != nil {
				return o, bad
			}
			o.x, o.y, fromLoc = lon, lat, true
			i += 2
		case opt == "BYRADIUS" && left >= 2 && search && !o.byBox:
			if r := parseRadius(args[i+1], args[i+2], &o.radius, &o.toM); r != nil {
				return o, r
			}
			byRadius = true
			i += 2
		case opt == "BYBOX" && left >= 3 && search && !byRadius:
			if r := parseGeoBox(args[i+1], args[i+2], args[i+3], &o); r != nil {
				return o, r
			}
			i += 3
		default:
			return o, &errSyntax
		}
	}
	if o.storeKey != "" && (o.withDist || o.withHash || o.withCoord) {
		what := "STORE option in GEORADIUS"
		if storeCmd {
			what = "GEOSEARCHSTORE"
		}
		return o, errReply("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
	}
	if search && !fromMember && !fromLoc {
		return o, errReply("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + c.argv0)
	}
	if search && !byRadius && !o.byBox {
		return o, errReply("ERR exactly one of BYRADIUS and BYBOX can be specified for " + c.argv0)
	}
	if any && o.count == 0 {
		return o, errReply("ERR the ANY argument requires COUNT argument")
	}
	return o, nil
}

// parseGeoradiusCenter parses GEORADIUS's lon lat radius unit, or
// GEORADIUSBYMEMBER's member radius unit, into o (the member's position and
// the radius only when the key exists: the server looks the member up
// first), and returns where the options start.
func (c *cmdCtx) parseGeoradiusCenter(args []string, e *entry, o *geoSearch) (int, *resp.Reply) {
	if c.name == "georadius" || c.name == "georadius_ro" {
		lon, lat, bad := parseLonLat(args[1], args[2])
		if bad != nil {
			return 0, bad
		}
		o.x, o.y = lon, lat
		if r := parseRadius(args[3], args[4], &o.radius, &o.toM); r != nil {
			return 0, r
		}
		return 5, nil
	}
	if e != nil {
		s, ok := e.zset.scores[args[1]]
		if !ok {
			return 0, errReply("ERR could not decode requested zset member")
		}
		o.x, o.y = geoDecode(uint64(s))
		if r := parseRadius(args[2], args[3], &o.radius, &o.toM); r != nil {
			return 0, r
		}
	}
	return 4, nil
}

// parseGeoBox parses BYBOX's width height unit into o (converted to meters).
func parseGeoBox(w, h, unit string, o *geoSearch) *resp.Reply {
	width, ok1 := parseFloat(w)
	if !ok1 {
		return errReply("ERR need numeric width")
	}
	height, ok2 := parseFloat(h)
	if !ok2 {
		return errReply("ERR need numeric height")
	}
	if width < 0 || height < 0 {
		return errReply("ERR height or width cannot be negative")
	}
	u, ok := geoUnit(unit)
	if !ok {
		return &errGeoUnit
	}
	o.width, o.height, o.toM, o.byBox = width*u, height*u, u, true
	return nil
}

// geoSearchPoints returns z's members inside o's shape around o's center,
// sorted by distance (nearest first unless DESC) and cut to COUNT.
func geoSearchPoints(z *zsetValue, o *geoSearch) []geoPoint {
	var pts []geoPoint
	for _, m := range z.members() {
		s := z.scores[m]
		if s < 0 || s > 1<<53 {
			// The server scans the score ranges of the geohash boxes
			// around the center, which never hold a negative score nor
			// one far past 52 bits (ZADD can write them, GEOADD never).
			continue
		}
		lon, lat := geoDecode(uint64(s))
		p := geoPoint{member: m, score: s, lon: lon, lat: lat, dist: geoDistance(o.x, o.y, lon, lat)}
		if o.byBox {
			if earthRadiusM*math.Abs(degRad(o.y)-degRad(lat)) > o.height/2 || geoDistance(lon, lat, o.x, lat) > o.width/2 {
				continue
			}
		} else if p.dist > o.radius {
			continue
		}
		pts = append(pts, p)
	}
	desc := o.sortDir < 0
	sort.SliceStable(pts, func(i, j int) bool {
		if !desc {
			return pts[i].dist < pts[j].dist
		}
		return pts[i].dist > pts[j].dist
	})
	if o.count > 0 && int64(len(pts)) > o.count {
		pts = pts[:o.count]
	}
	return pts
}

// geoSearchReply is the reply for pts: bare members, or with WITHDIST,
// WITHHASH or WITHCOORD an array per member holding those in that order.
func geoSearchReply(pts []geoPoint, o *geoSearch) resp.Reply {
	out := make([]resp.Reply, 0, len(pts))
	for _, p := range pts {
		if !o.withDist && !o.withHash && !o.withCoord {
			out = append(out, resp.BulkReply(p.member))
			continue
		}
		item := []resp.Reply{resp.BulkReply(p.member)}
		if o.withDist {
			item = append(item, resp.BulkReply(fmt.Sprintf("%.4f", p.dist/o.toM)))
		}
		if o.withHash {
			item = append(item, resp.IntReply(int64(p.score)))
		}
		if o.withCoord {
			item = append(item, resp.ArrayReply(geoCoord(p.lon), geoCoord(p.lat)))
		}
		out = append(out, resp.ArrayReply(item...))
	}
	return resp.ArrayReply(out...)
}

// parseRadius is extractDistanceOrReply: radius (converted to meters) and unit.
func parseRadius(r, unit string, radius, toM *float64) *resp.Reply {
	v, ok := parseFloat(r)
	if !ok {
		return errReply("ERR need numeric radius")
	}
	if v < 0 {
		return errReply("ERR radius cannot be negative")
	}
	u, ok := geoUnit(unit)
	if !ok {
		return &errGeoUnit
	}
	*radius, *toM = v*u, u
	return nil
}
