package catalog

import (
	"strings"
	"sync"
)

// Query expansion. Agents describe a need in their own words; tools describe
// themselves in theirs. Each line below is a group of words that, in tool
// descriptions, name the same capability or object: general software and
// everyday vocabulary, not any one catalog's. A query word adds the other
// words of its groups at a lower weight (see expansionWeight).
const synonymGroups = `
search find lookup look query seek discover
get fetch retrieve obtain read load
create make new add generate build
delete remove erase rm destroy drop unlink
update edit modify change patch alter
rename mv move
copy cp duplicate clone
list ls enumerate browse
show display view print
run execute exec launch invoke start
stop kill terminate end halt abort cancel
process pid
command shell terminal cmd bash console cli
file document doc
folder directory dir
path filepath
image picture photo img pic
screenshot screen capture snapshot
video movie film clip
audio sound voice speech
music song track
web internet online website site webpage page url link http
browser navigate visit goto open
click press tap
type fill enter input
form field
download save
upload attach
text content body
markdown md
pdf
slide presentation ppt powerpoint deck pptx
spreadsheet excel xlsx sheet csv table
word docx
price cost quote value worth rate
stock share ticker equity security
company corporation firm business
fund holder institution investor
crypto cryptocurrency bitcoin btc ethereum eth coin token
currency exchange forex fx money dollar euro usd eur
weather forecast temperature rain snow wind climate humidity
time clock hour timezone tz
date day today tomorrow yesterday calendar
now current latest present live realtime
convert conversion transform translate
translate translation language
chart graph plot visualize visualization diagram
map location place geo coordinate latitude longitude address geocode
near nearby around close
route direction distance travel
email mail inbox
message msg chat send post notify notification
user account profile
login auth authentication signin credential password
config configuration setting preference option
repo repository
git version commit
branch checkout
issue ticket bug
error exception crash failure
log logs trace
test check verify validate
db database sql
note memo memory remember
knowledge entity relation graph
entity person people individual organization
observation note fact remark
summary summarize summarise abstract overview
news headline article story
paper publication research study arxiv
trend trending popular hot
package library module dependency npm pypi
docs documentation manual reference guide api
code source program script
function method api endpoint
recipe cook cooking dish meal food cuisine eat
game player match champion
calculate compute math calculator arithmetic
random generate
info information detail details metadata
history historical past previous
statistics stats analytics metric
job career position
book novel author
wiki wikipedia encyclopedia
diff difference compare changed changes
reset undo revert unstage restore rollback
replace swap substitute
alternative instead replacement substitute
deprecated retired obsolete unmaintained
tree hierarchy nested structure layout
hotel accommodation lodging stay rental booking
flight airline airport
asset commodity gold silver metal
intro introduction summary overview
star popular trending
component widget ui element
`

// abbreviations map short forms to their words, one way.
const abbreviations = `
k8s kubernetes
js javascript
ts typescript
py python
pr pull
env environment
var variable
img image
pic picture
repo repository
dir directory
doc document
docs documentation
msg message
db database
cfg config
config configuration
info information
stats statistics
auth authentication
num number
max maximum
min minimum
qty quantity
desc description
`

// cjkGlossary maps common Chinese words in tool descriptions and requests to
// English search words, so that Chinese queries find English tools and the
// reverse. General vocabulary only.
const cjkGlossary = `
搜索 search
搜寻 search
查找 find search
查询 query search
检索 search retrieve
文件 file
文档 document
目录 directory
图片 image
图像 image
照片 photo
截图 screenshot
视频 video
音乐 music
天气 weather
下雨 rain weather
气温 temperature weather
温度 temperature
预报 forecast
股价 stock price
股票 stock
价格 price
价钱 price
汇率 exchange rate currency
货币 currency
时间 time
几点 time hour
时区 timezone
日期 date
今天 today date
明天 tomorrow date
当前 current
现在 current now
新闻 news
热搜 trending hot
热榜 trending hot
热门 popular trending
趋势 trend
网页 webpage web
网站 website web
链接 link url
浏览器 browser
翻译 translate
地图 map
地址 address
位置 location
附近 nearby
路线 route
火车 train
高铁 train
车票 ticket train
余票 ticket train
车站 station
城市 city
菜谱 recipe
食谱 recipe
做菜 recipe cook
做饭 cook recipe
吃饭 meal eat
吃什么 eat recipe
食材 ingredient recipe
日历 calendar
黄历 calendar almanac
农历 lunar calendar
论文 paper
代码 code
仓库 repository
提交 commit
图表 chart
折线图 line chart
柱状图 bar chart
饼图 pie chart
删除 delete
创建 create
读取 read
写入 write
下载 download
上传 upload
邮件 email
消息 message
比特币 bitcoin
加密货币 crypto
游戏 game
列表 list
关键词 keyword
内容 content
获取 get fetch
计算 calculate
数据库 database
点击 click
打开 open
导航 navigate
推荐 recommend
公司 company
总结 summary
摘要 summary
分析 analysis
统计 statistics
数据 data
用户 user
评论 comment
问题 question
答案 answer
书 book
电影 movie
演示 presentation
幻灯片 slide presentation
表格 table spreadsheet
`

// expansionWeight scales the terms a query word adds through its groups.
const expansionWeight = 0.4

// thesaurus maps a stemmed term to the stemmed terms it expands to.
type thesaurus map[string][]string

func buildThesaurus() thesaurus {
	th := thesaurus{}
	add := func(from, to string) {
		if from == to {
			return
		}
		for _, t := range th[from] {
			if t == to {
				return
			}
		}
		th[from] = append(th[from], to)
	}
	for _, line := range strings.Split(synonymGroups, "\n") {
		group := stemAll(strings.Fields(line))
		for _, a := range group {
			for _, b := range group {
				add(a, b)
			}
		}
	}
	for _, line := range strings.Split(abbreviations, "\n") {
		f := stemAll(strings.Fields(line))
		for _, to := range f[min(1, len(f)):] {
			add(f[0], to)
		}
	}
	return th
}

func stemAll(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = stem(w)
	}
	return out
}

// glossary maps a Chinese word to English stemmed terms.
type glossary struct {
	words  map[string][]string
	maxLen int // in runes
}

func buildGlossary() *glossary {
	g := &glossary{words: map[string][]string{}}
	for _, line := range strings.Split(cjkGlossary, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		g.words[f[0]] = stemAll(f[1:])
		g.maxLen = max(g.maxLen, len([]rune(f[0])))
	}
	return g
}

// english returns the English terms of the glossary words found in s.
func (g *glossary) english(s string) []string {
	if !hasCJK(s) {
		return nil
	}
	var out []string
	rs := []rune(s)
	for i := range rs {
		if !isCJK(rs[i]) {
			continue
		}
		for n := 1; n <= g.maxLen && i+n <= len(rs); n++ {
			out = append(out, g.words[string(rs[i:i+n])]...)
		}
	}
	return out
}

// hasCJK reports whether s has a character of a script written without
// spaces.
func hasCJK(s string) bool {
	for _, r := range s {
		if isCJK(r) {
			return true
		}
	}
	return false
}

// Built once, on first use: the tables are constants, and commands that
// neither index nor search (a call, serve before its first search) should
// not build them at start-up.
var (
	defaultThesaurus = sync.OnceValue(buildThesaurus)
	defaultGlossary  = sync.OnceValue(buildGlossary)
)
