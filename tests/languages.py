"""Notes in two languages in one workspace, each answer written once: the English team's notes and the Chinese
team's, on different topics (tests of memoryd.store.languages, for both stores)."""

from __future__ import annotations

from pathlib import Path

from .conftest import write

ENGLISH = [
    "The team decided to move the billing database from MySQL to PostgreSQL in March because replication kept failing.",
    "Our on-call rotation changes every Monday at 9am; the handover happens in the incident channel.",
    "The mobile app release is frozen until the crash in the photo upload screen is fixed.",
    "Sarah prefers code reviews in the morning and blocks her calendar after 4pm for deep work.",
    "The office coffee machine is descaled on the first Friday of each month by facilities.",
    "Customer churn rose to 4% last quarter, mostly small accounts leaving after the price change.",
    "We rotate the TLS certificates for the public API every 60 days using the renewal script.",
    "The design system now uses an 8-pixel spacing grid and the Inter font for all body text.",
    "Quarterly planning starts on October 2nd; each squad brings three ranked proposals.",
    "The data warehouse nightly load takes about 40 minutes and finishes before 3am.",
    "Interview loops for senior engineers include a system design round and a pairing session.",
    "Tom is on parental leave until the end of January; Priya covers his vendor contracts.",
    "The search service caches query results for five minutes to absorb traffic spikes.",
    "Expense reports must be filed within 30 days, with receipts attached as PDF files.",
    "The staging cluster is rebuilt from scratch every Sunday night to catch configuration drift.",
    "Our marketing site moved to a static generator, which cut page load time by half.",
    "Support tickets tagged urgent must get a first reply within two business hours.",
    "The legal team asked us to keep audit logs for seven years in cold storage.",
    "Feature flags older than ninety days are reviewed and removed during cleanup week.",
    "The warehouse robots stop for maintenance every Tuesday between noon and 2pm.",
    "We switched the newsletter provider because the old one kept landing in spam folders.",
    "The accessibility audit found missing labels on twelve form fields in checkout.",
    "Load tests showed the gateway saturates at 18,000 requests per second per node.",
    "The hackathon winners built a tool that summarises long pull request discussions.",
    "Backups of the document store are restored into a sandbox weekly to prove they work.",
    "New hires get a laptop, a security key and a buddy on their first day.",
    "The recommendation model is retrained every night on the previous week's clicks.",
    "Our Slack retention policy deletes direct messages after one year.",
    "The payment page shows prices in the visitor's local currency since the September release.",
    "Error budgets are reviewed monthly; a burned budget pauses feature work for that service.",
    "The book club is reading a history of the transistor this month.",
    "The parking garage closes at midnight, so late deploys should be planned from home.",
    "Dependency updates are batched by a bot every Wednesday and merged after CI passes.",
    "The analytics dashboard counts a session as ended after thirty minutes of inactivity.",
    "The fire drill is scheduled for the second week of November; everyone meets in the car park.",
    "Translations for the Spanish launch are handled by an agency and reviewed by Lucia.",
    "Log lines from the event_dispatcher service are shipped to the archive bucket every hour.",
]
IDENTIFIER = ("event_dispatcher", "memory/en/e36.md")  # an exact name: keyword search must still decide

CHINESE = [
    "周五下午三点在三楼会议室给新同事办欢迎会，小王负责买蛋糕。",
    "食堂从下个月开始提供素食午餐，每周二和周四供应。",
    "公司年会定在一月十八日，地点是市中心的大酒店。",
    "新的请假制度规定，病假超过三天需要提供医院证明。",
    "小李下周去上海出差，拜访两家供应商并参加展会。",
    "办公室的打印机经常卡纸，行政部已经申请更换新机器。",
    "春节放假安排：二月九日至十七日放假，共九天。",
    "市场部计划在五月推出夏季促销活动，重点是年轻用户。",
    "健身房每周一三五晚上开放，员工可以免费使用。",
    "新员工培训为期两周，第一周学习公司文化和规章制度。",
    "财务部提醒大家每月二十五日之前提交报销单据。",
    "张经理要求每个项目组每周五提交一份进度报告。",
    "公司决定明年在成都开设一个新的研发中心。",
    "员工体检安排在四月，地点是附近的社区医院。",
    "客服团队反映用户投诉主要集中在物流太慢。",
    "下个季度的销售目标比今年提高百分之二十。",
    "会议室预订需要提前一天在内部系统上登记。",
    "王老师每周三晚上给员工上英语口语课。",
    "仓库搬到城东以后，送货时间缩短了一天。",
    "公司的班车路线调整了，新增了地铁站的停靠点。",
    "端午节每位员工会收到一盒粽子和一箱水果。",
    "产品经理希望在七月之前完成新版首页的设计。",
    "办公室绿植由一家园艺公司每两周来维护一次。",
    "技术分享会每月最后一个星期四下午举行。",
    "大家反映空调太冷，物业答应把温度调高两度。",
    "新的门禁卡下周发放，旧卡月底之后作废。",
    "公司与一所大学合作，每年接收十名实习生。",
    "为了节约用电，晚上九点以后走廊的灯会自动关闭。",
    "团队建设活动定在十月，去郊外爬山和烧烤。",
    "采购部正在比较三家公司的办公椅报价。",
    "陈总下个月退休，大家准备给他写一本纪念册。",
    "季度奖金将在本月底随工资一起发放。",
    "公司的公众号每周发布两篇行业分析文章。",
    "周末加班需要提前得到部门主管的批准。",
    "新的咖啡机放在二楼茶水间，支持扫码付款。",
    "法务部提醒，所有合同都必须经过两轮审核才能签字。",
]

# (question, the note that answers it): asked across the two languages
ACROSS = [
    ("团队为什么决定更换计费系统的数据库？", "memory/en/e00.md"),
    ("Who buys the cake for Friday's welcome party?", "memory/zh/z00.md"),
    ("When is the company's annual party and where?", "memory/zh/z02.md"),
]


def write_notes(workspace: Path) -> None:
    for i, text in enumerate(ENGLISH):
        write(workspace / "memory" / "en" / f"e{i:02d}.md", text + "\n")
    for i, text in enumerate(CHINESE):
        write(workspace / "memory" / "zh" / f"z{i:02d}.md", text + "\n")
