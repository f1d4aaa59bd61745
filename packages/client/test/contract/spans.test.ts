import { spans } from "@phasebound/testkit/contract"
import { registerFamilies } from "./register.js"

registerFamilies([spans])
