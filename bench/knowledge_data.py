"""The words of bench.knowledge's synthetic year: subjects, attributes and their values, and the templates of
statements, filler entries, conversation turns and questions in English, Vietnamese, Chinese and Thai.

Slots: {s} subject, {a} the attribute's name, {v} the value stated, {o} the value it replaces, {why} a reason
(with its own leading space or comma, or empty), {c} a clause that states the value without naming the attribute,
{t} a statement inside a conversation turn, {p} and {p2} people, {n} a count, {q} a quarter.
"""

from __future__ import annotations

from dataclasses import dataclass

LANGUAGES = ("en", "vi", "zh", "th")

SUBJECTS = (
    "billing",
    "checkout",
    "catalog",
    "auth",
    "notifications",
    "analytics",
    "inventory",
    "reporting",
    "onboarding",
    "payments",
    "shipping",
    "recommendations",
    "support-portal",
    "mobile-api",
    "ledger",
    "pricing",
)


@dataclass(frozen=True)
class Attribute:
    key: str
    values: tuple[str, ...]
    names: dict[str, tuple[str, ...]]  # per language; the first is what questions mostly say
    clause: dict[str, str]  # per language: the value stated without naming the attribute ({s}, {v})


ATTRIBUTES = (
    Attribute(
        "cache",
        ("Redis", "Memcached", "Valkey", "Dragonfly", "Hazelcast"),
        {
            "en": ("cache", "caching layer", "cache store"),
            "vi": ("cache", "bộ nhớ đệm", "lớp cache"),
            "zh": ("缓存", "缓存层", "缓存服务"),
            "th": ("แคช", "ระบบแคช", "ชั้นแคช"),
        },
        {
            "en": "{s} caches its sessions in {v}",
            "vi": "{s} lưu session tạm trong {v}",
            "zh": "{s}的会话数据放在{v}里",
            "th": "{s} เก็บ session ไว้ใน {v}",
        },
    ),
    Attribute(
        "queue",
        ("RabbitMQ", "Kafka", "Amazon SQS", "NATS", "Pulsar"),
        {
            "en": ("message queue", "message broker", "queue"),
            "vi": ("hàng đợi tin nhắn", "message queue", "broker"),
            "zh": ("消息队列", "消息中间件", "队列"),
            "th": ("คิวข้อความ", "message broker", "ระบบคิว"),
        },
        {
            "en": "{s} publishes its events to {v}",
            "vi": "{s} đẩy event qua {v}",
            "zh": "{s}的事件都发到{v}",
            "th": "{s} ส่ง event ผ่าน {v}",
        },
    ),
    Attribute(
        "database",
        ("PostgreSQL", "MySQL", "MongoDB", "CockroachDB", "DynamoDB"),
        {
            "en": ("database", "primary datastore", "DB"),
            "vi": ("cơ sở dữ liệu", "database", "CSDL"),
            "zh": ("数据库", "主存储", "主库"),
            "th": ("ฐานข้อมูล", "ดาต้าเบส", "DB หลัก"),
        },
        {
            "en": "{s} stores its records in {v}",
            "vi": "{s} lưu dữ liệu trong {v}",
            "zh": "{s}的数据存在{v}里",
            "th": "{s} เก็บข้อมูลไว้ใน {v}",
        },
    ),
    Attribute(
        "ci",
        ("Jenkins", "GitHub Actions", "GitLab CI", "CircleCI", "Buildkite"),
        {
            "en": ("CI", "build pipeline", "CI system"),
            "vi": ("CI", "hệ thống build", "pipeline build"),
            "zh": ("CI", "持续集成", "构建流水线"),
            "th": ("CI", "ระบบ build", "ไปป์ไลน์ build"),
        },
        {
            "en": "{s} builds and tests run on {v}",
            "vi": "{s} chạy build và test trên {v}",
            "zh": "{s}的构建和测试跑在{v}上",
            "th": "{s} รัน build กับเทสต์บน {v}",
        },
    ),
    Attribute(
        "monitoring",
        ("Datadog", "Prometheus", "New Relic", "Grafana Cloud", "Zabbix"),
        {
            "en": ("monitoring", "metrics stack", "monitoring tool"),
            "vi": ("giám sát", "công cụ monitoring", "hệ thống metrics"),
            "zh": ("监控", "监控系统", "指标平台"),
            "th": ("ระบบมอนิเตอร์", "การมอนิเตอร์", "เครื่องมือดู metrics"),
        },
        {
            "en": "{s} metrics and alerts live in {v}",
            "vi": "metrics và cảnh báo của {s} nằm trên {v}",
            "zh": "{s}的指标和告警都在{v}上",
            "th": "metrics กับ alert ของ {s} อยู่บน {v}",
        },
    ),
    Attribute(
        "logging",
        ("Loki", "Splunk", "Graylog", "Papertrail", "Elasticsearch"),
        {
            "en": ("logging", "log pipeline", "log storage"),
            "vi": ("hệ thống log", "lưu trữ log", "logging"),
            "zh": ("日志系统", "日志平台", "日志存储"),
            "th": ("ระบบเก็บ log", "ระบบ logging", "ที่เก็บ log"),
        },
        {
            "en": "{s} logs are shipped to {v}",
            "vi": "log của {s} được đẩy về {v}",
            "zh": "{s}的日志都打到{v}",
            "th": "log ของ {s} ถูกส่งไปที่ {v}",
        },
    ),
    Attribute(
        "search_engine",
        ("Elasticsearch", "OpenSearch", "Meilisearch", "Typesense", "Solr"),
        {
            "en": ("search engine", "full-text index", "search backend"),
            "vi": ("công cụ tìm kiếm", "search engine", "chỉ mục tìm kiếm"),
            "zh": ("搜索引擎", "全文检索", "搜索后端"),
            "th": ("เสิร์ชเอนจิน", "ระบบค้นหา", "ดัชนีค้นหา"),
        },
        {
            "en": "{s} indexes its documents in {v}",
            "vi": "{s} đánh chỉ mục tài liệu bằng {v}",
            "zh": "{s}的文档索引建在{v}上",
            "th": "{s} ทำดัชนีเอกสารด้วย {v}",
        },
    ),
    Attribute(
        "deploy",
        ("Argo CD", "Flux", "Spinnaker", "Octopus Deploy", "Helm"),
        {
            "en": ("deployment tool", "CD tool", "rollout tool"),
            "vi": ("công cụ deploy", "công cụ triển khai", "CD"),
            "zh": ("部署工具", "发布工具", "CD工具"),
            "th": ("เครื่องมือ deploy", "ระบบ deploy", "เครื่องมือ CD"),
        },
        {
            "en": "{s} is deployed with {v}",
            "vi": "{s} được deploy bằng {v}",
            "zh": "{s}通过{v}发布",
            "th": "{s} deploy ด้วย {v}",
        },
    ),
    Attribute(
        "error_tracking",
        ("Sentry", "Rollbar", "Bugsnag", "Honeybadger", "Airbrake"),
        {
            "en": ("error tracker", "crash reporting", "exception tracking"),
            "vi": ("công cụ theo dõi lỗi", "error tracking", "báo lỗi"),
            "zh": ("错误追踪", "异常监控", "报错平台"),
            "th": ("ระบบติดตามข้อผิดพลาด", "error tracker", "ระบบรายงาน error"),
        },
        {
            "en": "{s} exceptions are reported to {v}",
            "vi": "lỗi của {s} được báo về {v}",
            "zh": "{s}的异常都上报到{v}",
            "th": "error ของ {s} ถูกรายงานไปที่ {v}",
        },
    ),
    Attribute(
        "feature_flags",
        ("LaunchDarkly", "Unleash", "Flagsmith", "ConfigCat", "GrowthBook"),
        {
            "en": ("feature flag service", "flag service", "feature flag system"),
            "vi": ("feature flag", "công cụ bật tắt tính năng", "hệ thống flag"),
            "zh": ("功能开关", "特性开关平台", "feature flag"),
            "th": ("ระบบ feature flag", "ฟีเจอร์แฟล็ก", "ตัวเปิดปิดฟีเจอร์"),
        },
        {
            "en": "{s} toggles its features in {v}",
            "vi": "{s} bật tắt tính năng qua {v}",
            "zh": "{s}的开关都在{v}里配置",
            "th": "{s} เปิดปิดฟีเจอร์ผ่าน {v}",
        },
    ),
    Attribute(
        "cdn",
        ("Cloudflare", "Fastly", "Akamai", "CloudFront", "Bunny CDN"),
        {
            "en": ("CDN", "edge network", "content delivery network"),
            "vi": ("CDN", "mạng phân phối nội dung", "edge"),
            "zh": ("CDN", "内容分发网络", "边缘加速"),
            "th": ("CDN", "เครือข่ายส่งเนื้อหา", "edge"),
        },
        {
            "en": "{s} static assets are served through {v}",
            "vi": "file tĩnh của {s} được phục vụ qua {v}",
            "zh": "{s}的静态资源走{v}",
            "th": "ไฟล์ static ของ {s} เสิร์ฟผ่าน {v}",
        },
    ),
    Attribute(
        "email",
        ("SendGrid", "Mailgun", "Postmark", "Amazon SES", "Mailjet"),
        {
            "en": ("email provider", "transactional email service", "mail provider"),
            "vi": ("dịch vụ email", "nhà cung cấp email", "dịch vụ gửi mail"),
            "zh": ("邮件服务", "邮件服务商", "发信服务"),
            "th": ("ผู้ให้บริการอีเมล", "บริการส่งอีเมล", "ระบบส่งเมล"),
        },
        {
            "en": "{s} sends its emails through {v}",
            "vi": "{s} gửi email qua {v}",
            "zh": "{s}的邮件通过{v}发送",
            "th": "{s} ส่งอีเมลผ่าน {v}",
        },
    ),
    Attribute(
        "hosting",
        ("AWS", "Google Cloud", "Azure", "Hetzner", "DigitalOcean"),
        {
            "en": ("cloud provider", "hosting", "cloud"),
            "vi": ("nhà cung cấp cloud", "hạ tầng cloud", "hosting"),
            "zh": ("云服务商", "云平台", "托管平台"),
            "th": ("ผู้ให้บริการคลาวด์", "คลาวด์", "โฮสติ้ง"),
        },
        {
            "en": "{s} runs on {v}",
            "vi": "{s} chạy trên {v}",
            "zh": "{s}跑在{v}上",
            "th": "{s} รันอยู่บน {v}",
        },
    ),
    Attribute(
        "storage",
        ("Amazon S3", "Google Cloud Storage", "MinIO", "Backblaze B2", "Cloudflare R2"),
        {
            "en": ("object storage", "file storage", "blob store"),
            "vi": ("lưu trữ object", "kho lưu file", "object storage"),
            "zh": ("对象存储", "文件存储", "存储桶"),
            "th": ("ที่เก็บไฟล์", "object storage", "พื้นที่เก็บไฟล์"),
        },
        {
            "en": "{s} keeps uploaded files in {v}",
            "vi": "{s} lưu file upload trên {v}",
            "zh": "{s}上传的文件存在{v}",
            "th": "{s} เก็บไฟล์ที่อัปโหลดไว้บน {v}",
        },
    ),
)

# The first statement of a fact.
FIRST = {
    "en": (
        "{s}: we use {v} as the {a}.",
        "{s} uses {v} for its {a}{why}.",
        "Set up {v} as the {a} for {s} today.",
        "Decided: {s} will use {v} for the {a}{why}.",
        "The {a} for {s} is {v}, see the design doc.",
        "Picked {v} as the {a} of {s}{why}.",
    ),
    "vi": (
        "{s}: dùng {v} làm {a}.",
        "{s} dùng {v} cho {a}{why}.",
        "Đã setup {v} làm {a} cho {s}.",
        "Chốt: {a} của {s} là {v}.",
        "{a} của {s} là {v}, xem tài liệu thiết kế.",
        "Chọn {v} làm {a} cho {s}{why}.",
    ),
    "zh": (
        "{s}：{a}用{v}。",
        "{s}的{a}选了{v}{why}。",
        "今天给{s}搭好了{v}作为{a}。",
        "定了：{s}用{v}做{a}。",
        "{s}的{a}是{v}，详见设计文档。",
        "{s}采用{v}作为{a}{why}。",
    ),
    "th": (
        "{s}: ใช้ {v} เป็น{a}",
        "{s} ใช้ {v} เป็น{a}{why}",
        "วันนี้ตั้ง {v} เป็น{a}ให้ {s} แล้ว",
        "สรุป: {a}ของ {s} คือ {v}",
        "{a}ของ {s} คือ {v} ดูรายละเอียดในเอกสารออกแบบ",
        "เลือก {v} เป็น{a}ของ {s}{why}",
    ),
}

# A change that names the value it replaces.
NAMES_OLD = {
    "en": (
        "Switched the {s} {a} from {o} to {v}{why}.",
        "{s}: migrated the {a} off {o} onto {v}{why}.",
        "Replaced {o} with {v} as the {a} for {s}{why}.",
        "Done moving {s} from {o} to {v} ({a}).",
        "{s} no longer uses {o} for the {a}; it is {v} now.",
    ),
    "vi": (
        "Đã chuyển {a} của {s} từ {o} sang {v}{why}.",
        "{s}: migrate {a} từ {o} qua {v} xong.",
        "Thay {o} bằng {v} làm {a} cho {s}{why}.",
        "{s} không dùng {o} làm {a} nữa, giờ là {v}.",
        "Bỏ {o}, {s} chuyển {a} sang {v}{why}.",
    ),
    "zh": (
        "{s}的{a}从{o}换成了{v}{why}。",
        "{s}：{a}已经从{o}迁移到{v}。",
        "把{s}的{a}由{o}替换为{v}{why}。",
        "{s}不再用{o}做{a}了，改用{v}。",
        "{o}下线了，{s}的{a}切到{v}{why}。",
    ),
    "th": (
        "ย้าย{a}ของ {s} จาก {o} ไป {v} แล้ว{why}",
        "{s}: migrate {a}จาก {o} ไป {v} เสร็จแล้ว",
        "เปลี่ยน{a}ของ {s} จาก {o} เป็น {v}{why}",
        "{s} เลิกใช้ {o} เป็น{a}แล้ว ตอนนี้ใช้ {v}",
        "ปลด {o} ออก {s} เปลี่ยนไปใช้ {v} เป็น{a}{why}",
    ),
}

# A change that states only the new value.
NEW_ONLY = {
    "en": (
        "{s} now uses {v} for the {a}.",
        "The {a} of {s} moved to {v}{why}.",
        "Cut over {s} to {v} for the {a}.",
        "From today {s} uses {v} as its {a}.",
        "Rolled out {v} as the new {a} for {s}.",
    ),
    "vi": (
        "{s} giờ dùng {v} cho {a}.",
        "{a} của {s} đã chuyển sang {v}{why}.",
        "Cutover {s} sang {v} ({a}) xong.",
        "Từ nay {s} dùng {v} làm {a}.",
        "Đã rollout {v} làm {a} mới cho {s}.",
    ),
    "zh": (
        "{s}现在用{v}做{a}。",
        "{s}的{a}已切换到{v}{why}。",
        "{s}的{a}迁到了{v}。",
        "今天起{s}改用{v}作为{a}。",
        "{s}上线了新的{a}：{v}。",
    ),
    "th": (
        "ตอนนี้ {s} ใช้ {v} เป็น{a}",
        "{a}ของ {s} ย้ายไป {v} แล้ว{why}",
        "สลับ {s} ไปใช้ {v} เป็น{a}เรียบร้อย",
        "ตั้งแต่วันนี้ {s} ใช้ {v} เป็น{a}",
        "rollout {v} เป็น{a}ตัวใหม่ของ {s} แล้ว",
    ),
}

# The attribute's clause ({c}) as a first statement and as a change.
CLAUSE_FIRST = {
    "en": ("{c}.", "Note: {c}."),
    "vi": ("{c}.", "Ghi chú: {c}."),
    "zh": ("{c}。", "备注：{c}。"),
    "th": ("{c}", "จดไว้: {c}"),
}
CLAUSE_CHANGE = {
    "en": ("As of today, {c}.", "{c} now{why}.", "From this week on, {c}."),
    "vi": ("Từ hôm nay {c}.", "Bây giờ {c}{why}.", "Kể từ tuần này, {c}."),
    "zh": ("从今天起，{c}。", "现在{c}了{why}。", "本周开始{c}。"),
    "th": ("ตั้งแต่วันนี้ {c}", "ตอนนี้ {c} แล้ว{why}", "เริ่มสัปดาห์นี้ {c}"),
}

# Why a value was chosen first, and why it was changed.
FIRST_REASONS = {
    "en": (" after comparing the options", " because the team already knows it", " for the managed offering"),
    "vi": (" sau khi so sánh các lựa chọn", " vì team đã quen dùng", " vì có bản managed"),
    "zh": ("，对比了几个方案之后", "，因为团队比较熟", "，看中它的托管服务"),
    "th": (" หลังจากเทียบตัวเลือกต่างๆ", " เพราะทีมคุ้นเคยอยู่แล้ว", " เพราะมีบริการแบบ managed"),
}
REASONS = {
    "en": (
        " after the incident review",
        " to cut costs",
        " because of the licence change",
        " per the architecture review",
        " since the old one kept timing out",
    ),
    "vi": (
        " sau buổi review sự cố",
        " để giảm chi phí",
        " vì vấn đề license",
        " theo quyết định của buổi họp kiến trúc",
        " vì cái cũ hay bị timeout",
    ),
    "zh": ("，因为事故复盘的结论", "，为了省成本", "，因为许可证变了", "，按架构评审的决定", "，旧的老是超时"),
    "th": (
        " หลังจากประชุมทบทวนเหตุขัดข้อง",
        " เพื่อลดค่าใช้จ่าย",
        " เพราะเรื่องไลเซนส์",
        " ตามที่ตกลงในที่ประชุมสถาปัตยกรรม",
        " เพราะตัวเดิมไทม์เอาต์บ่อย",
    ),
}

PEOPLE = {
    "en": ("Alice", "Ben", "Carla", "Dan", "Erin", "Farid", "Grace", "Hiro"),
    "vi": ("Minh", "Lan", "Huy", "Trang", "Đức", "Thảo", "Quân", "Ngọc"),
    "zh": ("王伟", "李娜", "张磊", "刘洋", "陈静", "杨帆", "赵敏", "孙浩"),
    "th": ("สมชาย", "นภา", "ธนา", "พิมพ์", "อนันต์", "วิภา", "กิตติ", "ศิริ"),
}

# Entries of a daily note that state no fact; some name a subject and an attribute, some a value.
FILLERS = {
    "en": (
        "Standup: {s} is on track for the sprint.",
        "TODO: review the {s} PR about pagination.",
        "1:1 with {p}, talked about the team's goals.",
        "Checked the {s} {a} dashboards, nothing unusual.",
        "{s} {a} latency spiked during the deploy, {p} is looking into it.",
        "Roadmap meeting for {s} Q{q}: mostly scope cuts.",
        "Lunch with {p} and {p2}.",
        "Read the postmortem of last week's {s} outage.",
        "Renew the {v} contract before the end of the month.",
        "{p} is out sick, covering the {s} on-call.",
        "Interviewed a backend candidate, good system design answers.",
        "Bug bash on {s} this afternoon, found {n} issues.",
        "Wrote the weekly update for leadership.",
        "Reminder: security training due Friday.",
        "Pairing with {p} on flaky {s} tests.",
        "Estimate the cost of the {a} for {s} next quarter.",
        "Ask {p} whether {s} needs a bigger {a} instance.",
    ),
    "vi": (
        "Standup: {s} đang đúng tiến độ sprint.",
        "TODO: review PR phân trang của {s}.",
        "1:1 với {p}, nói về mục tiêu của team.",
        "Xem dashboard {a} của {s}, không có gì bất thường.",
        "Độ trễ {a} của {s} tăng vọt lúc deploy, {p} đang kiểm tra.",
        "Họp roadmap {s} quý {q}: chủ yếu cắt bớt phạm vi.",
        "Ăn trưa với {p} và {p2}.",
        "Đọc postmortem sự cố {s} tuần trước.",
        "Gia hạn hợp đồng {v} trước cuối tháng.",
        "{p} nghỉ ốm, mình trực on-call {s} thay.",
        "Phỏng vấn một bạn backend, phần system design khá tốt.",
        "Bug bash {s} chiều nay, tìm được {n} lỗi.",
        "Viết báo cáo tuần cho sếp.",
        "Nhắc: hạn khoá đào tạo bảo mật là thứ Sáu.",
        "Pair với {p} sửa test chập chờn của {s}.",
        "Ước tính chi phí {a} cho {s} quý sau.",
        "Hỏi {p} xem {s} có cần {a} lớn hơn không.",
    ),
    "zh": (
        "站会：{s}按计划推进。",
        "待办：review {s}的分页PR。",
        "和{p}一对一，聊了团队目标。",
        "看了{s}的{a}看板，没发现异常。",
        "发布时{s}的{a}延迟飙升，{p}在查。",
        "{s}第{q}季度路线图会议：主要是砍需求。",
        "和{p}、{p2}一起吃午饭。",
        "读了上周{s}故障的复盘报告。",
        "月底前续签{v}的合同。",
        "{p}病假，我替他值{s}的班。",
        "面试了一个后端候选人，系统设计答得不错。",
        "下午{s}集中找bug，发现{n}个问题。",
        "写了给领导的周报。",
        "提醒：周五前完成安全培训。",
        "和{p}结对修{s}不稳定的测试。",
        "估算下季度{s}的{a}成本。",
        "问问{p}，{s}是不是需要更大的{a}实例。",
    ),
    "th": (
        "สแตนด์อัป: {s} เป็นไปตามแผนของสปรินต์",
        "TODO: รีวิว PR เรื่อง pagination ของ {s}",
        "คุยตัวต่อตัวกับ{p} เรื่องเป้าหมายของทีม",
        "ดูแดชบอร์ด{a}ของ {s} แล้ว ไม่มีอะไรผิดปกติ",
        "ช่วง deploy {a}ของ {s} ช้าลงมาก {p}กำลังดูอยู่",
        "ประชุม roadmap ของ {s} ไตรมาส {q}: ส่วนใหญ่ตัดสโคป",
        "กินข้าวกลางวันกับ{p}และ{p2}",
        "อ่าน postmortem ของเหตุขัดข้อง {s} เมื่อสัปดาห์ที่แล้ว",
        "ต่อสัญญา {v} ก่อนสิ้นเดือน",
        "{p}ลาป่วย เลยรับเวร on-call ของ {s} แทน",
        "สัมภาษณ์ผู้สมัครตำแหน่ง backend ตอบ system design ได้ดี",
        "bug bash ของ {s} บ่ายนี้ เจอ {n} ปัญหา",
        "เขียนรายงานประจำสัปดาห์ให้หัวหน้า",
        "เตือน: อบรมความปลอดภัยให้เสร็จภายในวันศุกร์",
        "จับคู่กับ{p}แก้เทสต์ของ {s} ที่ไม่เสถียร",
        "ประเมินค่าใช้จ่าย{a}ของ {s} สำหรับไตรมาสหน้า",
        "ถาม{p}ว่า {s} ต้องใช้{a}ตัวใหญ่ขึ้นไหม",
    ),
}

NOTE_TITLE = {
    "en": "# {y}-{m:02d}-{d:02d}",
    "vi": "# Ghi chú ngày {d}/{m}/{y}",
    "zh": "# {y}年{m}月{d}日",
    "th": "# บันทึกวันที่ {d}/{m}/{y}",
}
NOTE_SECTION = {"en": "## Later", "vi": "## Buổi chiều", "zh": "## 下午", "th": "## ช่วงบ่าย"}

# A statement said in a conversation, by the user or by the assistant.
SAID_BY_USER = {
    "en": ("FYI: {t}", "{t} Please keep that in mind.", "Quick update: {t}"),
    "vi": ("FYI: {t}", "{t} Nhớ giúp mình nhé.", "Cập nhật nhanh: {t}"),
    "zh": ("告诉你一下：{t}", "{t}记一下。", "更新一下：{t}"),
    "th": ("แจ้งให้ทราบ: {t}", "{t} ช่วยจำไว้ด้วย", "อัปเดตนิดนึง: {t}"),
}
SAID_BY_ASSISTANT = {
    "en": ("Noted. {t}", "Got it, I will remember: {t}"),
    "vi": ("Đã ghi nhận. {t}", "OK, mình sẽ nhớ: {t}"),
    "zh": ("好的，记下了：{t}", "收到。{t}"),
    "th": ("รับทราบ {t}", "โอเค จะจำไว้ว่า {t}"),
}

# Exchanges of a conversation that state no fact: (user, assistant); the last one closes a conversation.
CHATTER = {
    "en": (
        ("Can you summarize the {s} meeting?", "Sure: the timeline moved by a week and {p} takes the next on-call."),
        ("Draft a reminder about the release freeze.", "Draft: the release freeze starts Friday noon; merge before."),
        ("What should I prepare for the 1:1 with {p}?", "Goals for the quarter, blockers, and feedback on the sprint."),
        ("Help me word the {s} status update.", "{s} is on track; two bugs remain open and the demo is on Thursday."),
        ("Thanks!", "You're welcome."),
    ),
    "vi": (
        ("Tóm tắt giúp mình cuộc họp {s} nhé?", "Được: lịch lùi một tuần và {p} trực on-call đợt tới."),
        ("Soạn giúp lời nhắc về đợt đóng băng release.", "Nháp: đóng băng release từ trưa thứ Sáu, merge trước nhé."),
        ("Mình cần chuẩn bị gì cho buổi 1:1 với {p}?", "Mục tiêu quý, các vướng mắc và góp ý về sprint vừa rồi."),
        ("Viết giúp cập nhật tình hình {s}.", "{s} đúng tiến độ; còn hai bug mở và demo vào thứ Năm."),
        ("Cảm ơn!", "Không có gì."),
    ),
    "zh": (
        ("帮我总结一下{s}的会议？", "好的：时间线推迟一周，下一轮值班由{p}负责。"),
        ("起草一个关于发布冻结的提醒。", "草稿：发布冻结从周五中午开始，请在此之前合并代码。"),
        ("和{p}一对一之前我要准备什么？", "本季度目标、阻塞问题，以及对上个迭代的反馈。"),
        ("帮我写一下{s}的进展更新。", "{s}进展正常；还有两个bug未关闭，下次演示在周四。"),
        ("谢谢！", "不客气。"),
    ),
    "th": (
        ("ช่วยสรุปประชุม {s} ให้หน่อย", "ได้เลย: ไทม์ไลน์เลื่อนไปหนึ่งสัปดาห์ และ{p}รับเวร on-call รอบถัดไป"),
        ("ช่วยร่างข้อความเตือนเรื่องฟรีซ release", "ร่าง: ฟรีซ release เริ่มวันศุกร์เที่ยง กรุณา merge ก่อนเวลานั้น"),
        ("ต้องเตรียมอะไรบ้างก่อนคุยตัวต่อตัวกับ{p}", "เป้าหมายไตรมาส ปัญหาที่ติดอยู่ และฟีดแบ็กของสปรินต์ที่แล้ว"),
        ("ช่วยเขียนอัปเดตสถานะของ {s}", "{s} เป็นไปตามแผน ยังมีบั๊กเปิดอยู่สองตัว และเดโมครั้งถัดไปวันพฤหัส"),
        ("ขอบคุณ", "ยินดีครับ"),
    ),
}

# "What is it now?", without a time word and with one.
NOW = {
    "en": (
        "Which {a} does {s} use?",
        "What is the {a} for {s}?",
        "What does {s} use as its {a}?",
        "{s} {a}?",
        "What {a} is {s} on?",
        "Which {a} is {s} running?",
    ),
    "vi": (
        "{s} dùng {a} gì?",
        "{a} của {s} là gì?",
        "{s} sử dụng {a} nào?",
        "{a} cho {s} là cái nào?",
        "{s} dùng gì làm {a}?",
        "{s} {a}?",
    ),
    "zh": (
        "{s}用的是什么{a}？",
        "{s}的{a}是什么？",
        "{s}用哪个{a}？",
        "{s}的{a}用的是哪个？",
        "{s}拿什么做{a}？",
    ),
    "th": (
        "{s} ใช้{a}อะไร",
        "{a}ของ {s} คืออะไร",
        "{s} ใช้อะไรเป็น{a}",
        "{s} ใช้{a}ตัวไหน",
        "{a}ของ {s} ใช้ของเจ้าไหน",
    ),
}
NOW_TIMED = {
    "en": ("What {a} does {s} use now?", "Which {a} is {s} currently on?", "What is the current {a} of {s}?"),
    "vi": ("Hiện tại {s} dùng {a} gì?", "Bây giờ {a} của {s} là gì?", "{s} đang dùng {a} nào?"),
    "zh": ("{s}现在用的是什么{a}？", "{s}目前的{a}是哪个？", "{s}当前用哪个{a}？"),
    "th": ("ตอนนี้ {s} ใช้{a}อะไร", "ปัจจุบัน{a}ของ {s} คือตัวไหน", "{s} ใช้{a}ตัวไหนอยู่ตอนนี้"),
}
# "What did we use before?"; those with {v} name the current value.
BEFORE = {
    "en": (
        "What did {s} use as its {a} before?",
        "Which {a} did {s} use previously?",
        "What was the {a} for {s} before the switch?",
        "What was the previous {a} of {s}?",
        "What {a} was {s} on before {v}?",
        "Before {v}, which {a} did {s} have?",
    ),
    "vi": (
        "Trước đây {s} dùng {a} gì?",
        "{a} cũ của {s} là gì?",
        "Lúc trước {s} dùng gì làm {a}?",
        "{s} từng dùng {a} nào trước đó?",
        "Trước khi chuyển sang {v}, {s} dùng {a} nào?",
        "{s} dùng {a} gì trước {v}?",
    ),
    "zh": (
        "{s}之前用的是什么{a}？",
        "{s}以前的{a}是哪个？",
        "{s}原来用哪个{a}？",
        "{s}上一个{a}是什么？",
        "换成{v}之前，{s}用的是什么{a}？",
        "{s}在用{v}之前的{a}是什么？",
    ),
    "th": (
        "ก่อนหน้านี้ {s} ใช้{a}อะไร",
        "เมื่อก่อน {s} ใช้{a}ตัวไหน",
        "{a}ตัวเก่าของ {s} คืออะไร",
        "{s} เคยใช้{a}อะไรมาก่อน",
        "ก่อนจะเปลี่ยนเป็น {v} {s} ใช้{a}อะไร",
        "{a}ของ {s} ก่อนใช้ {v} คืออะไร",
    ),
}

# Around a statement in a conversation: the assistant's acknowledgement of the user's, the user's request before
# the assistant's.
ACKNOWLEDGED = {"en": "Noted.", "vi": "Đã ghi nhận.", "zh": "好的，记下了。", "th": "รับทราบครับ"}
ASKED_TO_NOTE = {
    "en": "Please note what we decided about {s}.",
    "vi": "Ghi lại giúp mình quyết định về {s}.",
    "zh": "帮我记一下{s}的决定。",
    "th": "ช่วยจดสิ่งที่ตัดสินใจเรื่อง {s} ไว้หน่อย",
}
